"""Reproductions: a standalone, plain-TensorFlow script for one evaluated value.

Every finding comes with a way to see it again outside the harness: the ``harness
probe`` command (:mod:`harness.probe`), and a script that imports only TensorFlow and
NumPy, writes the implementation out as TensorFlow code (its custom gradients as
``tf.custom_gradient`` functions), takes the derivative exactly as the harness did, and
prints the value. A user can paste it into a bug report.

Exactly as the harness did means: the same operations in the same order (the method's
code is written out, the implementation compiled from the same expression tree), the
same mode (eager, ``tf.function`` traced with a fixed signature, or that graph compiled
by XLA), and **the same position in a batch of the same size**. TensorFlow's CPU kernels
compute most of a batch in vector registers and its last few elements one by one, and
the two paths round differently (``tf.exp`` of one value alone and inside a batch of 402
differ in the last bit for about a quarter of float32 inputs here), so the script fills a
batch of the harness's size with the input and reads the harness's index.

A registered implementation is Python code inside the harness package: the script
carries its factory's source and the module-level functions and constants it uses
(:func:`harness.registered.catalogue.source`), without the registration decorator, so it still imports no
harness code. No TensorFlow here: this module writes text.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Sequence

from harness.cases import expressions as ex
from harness.cases.model import Case, CaseFunction, NestedRule, Rule
from harness.registered import catalogue as registry

__all__ = ["probe_command", "snippet"]

#: The arguments of a reduction along a new first axis, broadcast to one shape.
_STACK = "tf.stack([tf.broadcast_to(x, tf.shape(sum(a))) for x in a])"
_UNARY = {
    "exp": "tf.exp",
    "expm1": "tf.math.expm1",
    "log": "tf.math.log",
    "log1p": "tf.math.log1p",
    "sqrt": "tf.sqrt",
    "sin": "tf.sin",
    "cos": "tf.cos",
    "tan": "tf.tan",
    "sinh": "tf.sinh",
    "cosh": "tf.cosh",
    "tanh": "tf.tanh",
    "sigmoid": "tf.sigmoid",
    "softplus": "tf.math.softplus",
    "log_sigmoid": "tf.math.log_sigmoid",
    "elu": "tf.nn.elu",
    "selu": "tf.nn.selu",
    "gelu": "(lambda x: tf.nn.gelu(x, approximate=False))",
    "gelu_tanh": "(lambda x: tf.nn.gelu(x, approximate=True))",
    "erf": "tf.math.erf",
    "erfc": "tf.math.erfc",
    "lgamma": "tf.math.lgamma",
    "digamma": "tf.math.digamma",
    "atan": "tf.math.atan",
    "asinh": "tf.math.asinh",
    "acosh": "tf.math.acosh",
    "atanh": "tf.math.atanh",
    "abs": "tf.abs",
}
_BINARY_FUNCS = {
    "maximum": "tf.maximum",
    "minimum": "tf.minimum",
    "atan2": "tf.math.atan2",
    "xlogy": "tf.math.xlogy",
    "xlog1py": "tf.math.xlog1py",
    "pow": "tf.math.pow",
    "logsumexp": f"(lambda *a: tf.math.reduce_logsumexp({_STACK}, axis=0))",
    "log_softmax": f"(lambda *a: tf.nn.log_softmax({_STACK}, axis=0)[0])",
}
_COMPARE = {
    "lt": "tf.less",
    "le": "tf.less_equal",
    "gt": "tf.greater",
    "ge": "tf.greater_equal",
    "eq": "tf.equal",
    "ne": "tf.not_equal",
}
_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}


def _expr(node: ex.Node, env: dict[str, str], functions: dict[str, str]) -> str:
    """Python source computing ``node`` as :func:`harness.backends.tensorflow.build.compile_expression`
    does (the same operations in the same order)."""

    def go(n: ex.Node) -> str:
        if isinstance(n, ex.Var):
            return env[n.name]
        if isinstance(n, ex.Num):
            return f"tf.constant({n.value!r}, DTYPE)"
        if isinstance(n, ex.Const):
            return "tf.constant(math.pi, DTYPE)"
        if isinstance(n, ex.Unary):
            return f"(-{go(n.arg)})"
        if isinstance(n, ex.Binary):
            return f"({go(n.left)} {_OPS[n.op]} {go(n.right)})"
        if isinstance(n, ex.Call):
            args = ", ".join(go(a) for a in n.args)
            if n.func in functions:
                return f"{functions[n.func]}({args})"
            return f"{_UNARY.get(n.func) or _BINARY_FUNCS[n.func]}({args})"
        if isinstance(n, ex.Where):
            cond = f"{_COMPARE[n.cond.op]}({go(n.cond.left)}, {go(n.cond.right)})"
            return f"tf.where({cond}, {go(n.then)}, {go(n.otherwise)})"
        raise TypeError(f"cannot write {n!r}")

    return go(node)


class _Writer:
    """Writes functions as source, with unique names."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.count = 0

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def custom(
        self,
        expression: ex.Node,
        gradient: dict[str, Rule],
        names: Sequence[str],
        functions: dict[str, str],
        base: str,
    ) -> str:
        """A ``tf.custom_gradient`` function as :func:`harness.backends.tensorflow.build._custom` builds
        it; returns its name."""
        fname = self.name(base)
        params = [f"{n}_" for n in names]
        env = dict(zip(names, params))
        lines = ["@tf.custom_gradient", f"def {fname}({', '.join(params)}):"]
        lines.append(f"    y = {_expr(expression, env, functions)}")
        lines.append("")
        lines.append("    def grad(dy):")
        lines.append("        out = []")
        for n in names:
            rule = gradient.get(n)
            if rule is None:
                lines.append("        out.append(None)")
            elif isinstance(rule, NestedRule) and rule.pattern == "decorated_grad_fn":
                vjp = self.name("vjp")
                factor = _expr(rule.expression, env, functions)
                lines += [
                    f"        factor = {factor}",
                    "",
                    "        @tf.custom_gradient",
                    f"        def {vjp}(dy_):",
                    "            def grad2(ddy):",
                    "                return ddy * factor",
                    "",
                    "            return dy_ * factor, grad2",
                    "",
                    f"        out.append({vjp}(dy))",
                ]
            elif isinstance(rule, NestedRule):
                inner = self.custom(rule.expression, rule.gradient, names, functions, "rule")
                lines.append(f"        out.append(dy * {inner}({', '.join(params)}))")
            else:
                lines.append(f"        out.append({_expr(rule, {**env, 'dy': 'dy'}, functions)})")
        lines.append("        return out if len(out) > 1 else out[0]")
        lines.append("")
        lines.append("    return y, grad")
        self.blocks.append("\n".join(lines))
        return fname

    def functions(self, case_functions: Sequence[CaseFunction]) -> dict[str, str]:
        """The case's own functions (each may call the ones before it)."""
        known: dict[str, str] = {}
        for cf in case_functions:
            if cf.gradient:
                known[cf.name] = self.custom(
                    cf.expression, cf.gradient, cf.params, dict(known), cf.name
                )
            else:
                fname = self.name(cf.name)
                params = [f"{p}_" for p in cf.params]
                body = _expr(cf.expression, dict(zip(cf.params, params)), dict(known))
                self.blocks.append(f"def {fname}({', '.join(params)}):\n    return {body}")
                known[cf.name] = fname
        return known


_METHODS = """
def prefix_closure(partials):
    nodes = {p[:k] for p in partials for k in range(len(p) + 1)}
    return sorted(nodes, key=lambda p: (len(p), p))


def every_chain(method, fn, xs, partials):
    # One nested pass per chain (the prefixes of a leaf of the partials' prefix tree), all
    # in the one traced graph as in the harness: the compilers' rewrites see them all.
    nodes = prefix_closure(partials)
    leaves = [p for p in nodes if not any(q != p and q[: len(p)] == p for q in nodes)]
    out = {}
    for leaf in leaves or [()]:
        for p, value in method(fn, xs, [leaf[:k] for k in range(len(leaf) + 1)]).items():
            out.setdefault(p, value)
    return out


def reverse(fn, xs, chain):
    nodes = prefix_closure(chain)
    values = {}
    with contextlib.ExitStack() as stack:
        tapes = {}
        for p in reversed(nodes):
            if p:
                tape = stack.enter_context(tf.GradientTape())
                tape.watch(list(xs.values()))
                tapes[p] = tape
        values[()] = fn(**xs)
        for p in nodes[1:]:
            parent = values[p[:-1]]
            values[p] = None if parent is None else tapes[p].gradient(parent, xs[p[-1]])
    return values


def forward(fn, xs, chain, first_by_tape=False):
    nodes = prefix_closure(chain)
    values = {}
    with contextlib.ExitStack() as stack:
        accumulators = {}
        for p in sorted(nodes, key=len, reverse=True):
            if len(p) > (1 if first_by_tape else 0):
                accumulators[p] = stack.enter_context(
                    tf.autodiff.ForwardAccumulator(xs[p[-1]], tf.ones_like(xs[p[-1]]))
                )
        if first_by_tape:
            tapes = {}
            with contextlib.ExitStack() as inner:
                for p in nodes:
                    if len(p) == 1:
                        tape = inner.enter_context(tf.GradientTape())
                        tape.watch(list(xs.values()))
                        tapes[p] = tape
                values[()] = fn(**xs)
            for p, tape in tapes.items():
                values[p] = tape.gradient(values[()], xs[p[0]])
        else:
            values[()] = fn(**xs)
        for p in nodes:
            if p in accumulators:
                parent = values[p[:-1]]
                values[p] = None if parent is None else accumulators[p].jvp(parent)
    return values


def finite_difference(fn, xs, partial, base):
    # Central differences, the harness's step rule: h = base * |x| (base at x = 0),
    # base = eps**(1/(n+2)) rounded to the dtype; the product stencil of 1-D ones.
    names = list(xs)
    first = next(iter(xs.values()))
    counts = {v: partial.count(v) for v in names if v in partial}
    base = tf.constant(base, DTYPE)
    steps = {v: tf.where(xs[v] == 0, base, base * tf.abs(xs[v])) for v in counts}
    terms = []
    for combo in itertools.product(*[range(counts[v] + 1) for v in counts]):
        w, offsets = 1.0, {}
        for v, k in zip(counts, combo):
            w *= (-1) ** k * math.comb(counts[v], k)
            offsets[v] = counts[v] / 2 - k
        terms.append((w, offsets))
    batch = {v: [] for v in names}
    for _, offsets in terms:
        for v in names:
            if v in offsets:
                batch[v].append(xs[v] + tf.constant(offsets[v], DTYPE) * steps[v])
            else:
                batch[v].append(xs[v])
    n = tf.shape(first)[0]
    f = fn(**{v: tf.concat(batch[v], 0) for v in names})
    total = tf.zeros_like(first)
    for i, (w, _) in enumerate(terms):
        total = total + tf.constant(w, DTYPE) * f[i * n : (i + 1) * n]
    for v, k in counts.items():
        for _ in range(k):
            total = total / steps[v]
    return total


def every_difference(fn, xs, partials):
    # As in the harness: f itself and every partial of the run in the one traced graph.
    out = {(): fn(**xs)}
    for partial, base in partials:
        if partial:
            out[partial] = finite_difference(fn, xs, partial, base)
    return out
"""


def snippet(
    case: Case,
    implementation: str,
    point: dict[str, float],
    partial: tuple[str, ...],
    method: str,
    mode: str,
    dtype: str,
    batch: int = 1,
    index: int = 0,
    partials: Sequence[tuple[str, ...]] | None = None,
    title: str = "",
) -> str:
    """A standalone script printing the value the harness computed (``None`` where it
    is ``missing``). ``partials``: the method's partials in the harness run
    (the snippet computes them all, in the same passes); ``batch``/``index``: the size of
    the harness's batch and the point's position in it."""
    from harness.numerics.stencils import base_step

    impl = case.implementation(implementation)
    names = list(case.input_names)
    w = _Writer()
    functions = w.functions(case.functions)
    if impl.registered:
        source, factory = registry.source(impl.registered)
        w.blocks.append(
            f"# The registered implementation {impl.registered!r}, as the harness ships it.\n"
            + source
            + f"\n\n\nregistered = {factory}(tf, DTYPE)"
        )
        body = f"registered({', '.join(f'{n}={n}_' for n in names)})"
    elif impl.gradient:
        custom = w.custom(impl.expression, impl.gradient, names, functions, implementation)
        body = f"{custom}({', '.join(f'{n}_' for n in names)})"
    else:
        body = _expr(impl.expression, {n: f"{n}_" for n in names}, functions)
    params = ", ".join(f"{n}_" for n in names)
    w.blocks.append(
        f"def implementation({params}):\n"
        f"    y = {body}\n"
        f"    first = {names[0]}_\n"
        "    if y.shape != first.shape:  # a constant: broadcast over the batch\n"
        "        y = tf.broadcast_to(y, tf.shape(first))\n"
        "    return y"
    )
    # Every partial the harness computed with this method, in the same passes: in the
    # compiled modes, rewrites depend on the whole graph (a value with more users is
    # rewritten differently), so one chain alone can round differently.
    computed = sorted({*(partials or []), partial}, key=lambda p: (len(p), p))
    if method == "finite_difference":
        bases = [(p, base_step(dtype, len(p))) for p in computed]
        compute = (
            f"every_difference(lambda **a: implementation(**{{k + '_': v for k, v in "
            f"a.items()}}), xs, {bases!r})"
        )
    else:
        fn = {
            "reverse": "reverse",
            "forward": "forward",
            "forward_over_reverse": "lambda f, x, c: forward(f, x, c, first_by_tape=True)",
        }[method]
        compute = (
            f"every_chain({fn}, lambda **a: implementation(**{{k + '_': v for k, v in "
            f"a.items()}}), xs, {computed!r})"
        )
    inputs = ", ".join(f"tf.constant([{point[n]!r}] * BATCH, DTYPE)" for n in names)
    signature = ", ".join("tf.TensorSpec([BATCH], DTYPE)" for _ in names)
    run = {
        "eager": "value = body(*inputs)",
        "function": (
            f"value = tf.function(body, input_signature=[{signature}], autograph=False)(*inputs)"
        ),
        "xla": (
            f"graph = tf.function(body, input_signature=[{signature}], autograph=False)"
            ".get_concrete_function()\n"
            f"value = tf.function(lambda *a: graph(*a), input_signature=[{signature}], "
            "autograph=False, jit_compile=True)(*inputs)"
        ),
    }[mode] + f"[{computed.index(partial)}]"
    where = ", ".join(f"{n} = {point[n]!r}" for n in names)
    label = case.label(partial) or "f"
    return (
        textwrap.dedent(
            f"""\
            # {title or f"{case.id}: {implementation}, derivative {label}"}
            # Plain TensorFlow, no harness code: {method}, {mode} mode, {dtype}, at {where}.
            # The input fills a batch of {batch} and the value is read at index {index}, as
            # in the harness: TensorFlow's CPU kernels round a batch's vectorised part and
            # its last few elements differently.
            import contextlib
            import itertools
            import math

            import tensorflow as tf

            DTYPE = tf.{dtype}
            BATCH, INDEX = {batch}, {index}
            """
        )
        + _METHODS
        + "\n\n"
        + "\n\n\n".join(w.blocks)
        + "\n\n\n"
        # Every value is an output, as in the harness (one returned alone would let the
        # compiler drop the rest of the graph).
        + f"def body(*args):\n    xs = dict(zip({names!r}, args))\n"
        f"    values = {compute}\n    return [values.get(p) for p in {computed!r}]\n\n\n"
        + f"inputs = [{inputs}]\n"
        + run
        + "\nprint(None if value is None else repr(float(value.numpy()[INDEX])))\n"
    )


def probe_command(
    case_path: str,
    implementation: str,
    point: dict[str, float],
    partial_label: str,
    method: str,
    mode: str,
    dtype: str,
    batch: int,
    index: int,
    max_order: int | None = None,
) -> str:
    """The ``harness probe`` command that evaluates and judges the same value (with every
    partial up to ``max_order`` beside it, as the run computed them)."""
    at = " ".join(f"{k}={v!r}" for k, v in point.items())
    parts = [
        "harness probe",
        shlex.quote(case_path),
        shlex.quote(implementation),
        "--at",
        at,
        "--partial",
        shlex.quote(partial_label or "f"),
        "--method",
        method,
        "--mode",
        mode,
        "--dtype",
        dtype,
        "--batch",
        str(batch),
        "--index",
        str(index),
    ]
    if max_order is not None:
        parts += ["--max-order", str(max_order)]
    return " ".join(parts)
