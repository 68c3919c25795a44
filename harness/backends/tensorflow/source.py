"""TensorFlow source text: a case's implementations and the harness's derivative methods,
written out as plain TensorFlow code (no harness import in what it writes).

The text computes what :mod:`harness.backends.tensorflow.build` and
:mod:`harness.backends.tensorflow.derivatives` compute: the same operations in the same
order, custom gradients as ``tf.custom_gradient`` functions, a registered
implementation as its factory's source (:func:`harness.registered.catalogue.source`).
The reproduction scripts of findings (:mod:`harness.backends.tensorflow.repro`) and the
bare benchmark scripts (``benchmarks/overhead.py``) are built from it. No TensorFlow
here: this module writes text.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.backends.snippet import operator_texts
from harness.cases import expressions as ex
from harness.cases.model import Case, CaseFunction, NestedRule, Rule
from harness.registered import catalogue as registry

__all__ = ["METHODS_SOURCE", "SourceWriter", "expression_source"]

#: The arguments of a reduction along a new first axis, broadcast to one shape.
_STACK = "tf.stack([tf.broadcast_to(x, tf.shape(sum(a))) for x in a])"
_FUNCTIONS = operator_texts("tensorflow", _STACK)
_COMPARE = {
    "lt": "tf.less",
    "le": "tf.less_equal",
    "gt": "tf.greater",
    "ge": "tf.greater_equal",
    "eq": "tf.equal",
    "ne": "tf.not_equal",
}
_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}


def expression_source(node: ex.Node, env: dict[str, str], functions: dict[str, str]) -> str:
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
            return f"{_FUNCTIONS[n.func]}({args})"
        if isinstance(n, ex.Where):
            cond = f"{_COMPARE[n.cond.op]}({go(n.cond.left)}, {go(n.cond.right)})"
            return f"tf.where({cond}, {go(n.then)}, {go(n.otherwise)})"
        raise TypeError(f"cannot write {n!r}")

    return go(node)


class SourceWriter:
    """Writes functions as source, with unique names."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.count = 0
        self._functions: dict[str, str] | None = None

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
        lines.append(f"    y = {expression_source(expression, env, functions)}")
        lines.append("")
        lines.append("    def grad(dy):")
        lines.append("        out = []")
        for n in names:
            rule = gradient.get(n)
            if rule is None:
                lines.append("        out.append(None)")
            elif isinstance(rule, NestedRule) and rule.pattern == "decorated_grad_fn":
                vjp = self.name("vjp")
                factor = expression_source(rule.expression, env, functions)
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
                lines.append(
                    f"        out.append({expression_source(rule, {**env, 'dy': 'dy'}, functions)})"
                )
        lines.append("        return out if len(out) > 1 else out[0]")
        lines.append("")
        lines.append("    return y, grad")
        self.blocks.append("\n".join(lines))
        return fname

    def implementation(self, case: Case, implementation: str, fname: str) -> None:
        """``def fname(<input>_, ...)``: the case's implementation as the harness builds
        it (:func:`harness.backends.tensorflow.build.build_implementation`), its result
        broadcast over the batch where it is a constant. The case's own functions are
        written once per writer."""
        impl = case.implementation(implementation)
        names = list(case.input_names)
        if self._functions is None:
            self._functions = self.functions(case.functions)
        functions = self._functions
        if impl.registered:
            source, factory = registry.source(impl.registered)
            registered = self.name("registered")
            self.blocks.append(
                f"# The registered implementation {impl.registered!r}, as the harness ships it.\n"
                + source
                + f"\n\n\n{registered} = {factory}(tf, DTYPE)"
            )
            body = f"{registered}({', '.join(f'{n}={n}_' for n in names)})"
        elif impl.gradient:
            custom = self.custom(impl.expression, impl.gradient, names, functions, implementation)
            body = f"{custom}({', '.join(f'{n}_' for n in names)})"
        else:
            body = expression_source(impl.expression, {n: f"{n}_" for n in names}, functions)
        params = ", ".join(f"{n}_" for n in names)
        self.blocks.append(
            f"def {fname}({params}):\n"
            f"    y = {body}\n"
            f"    first = {names[0]}_\n"
            "    if y.shape != first.shape:  # a constant: broadcast over the batch\n"
            "        y = tf.broadcast_to(y, tf.shape(first))\n"
            "    return y"
        )

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
                body = expression_source(cf.expression, dict(zip(cf.params, params)), dict(known))
                self.blocks.append(f"def {fname}({', '.join(params)}):\n    return {body}")
                known[cf.name] = fname
        return known


METHODS_SOURCE = """
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
