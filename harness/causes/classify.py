"""What kind of mechanism a finding shows, decided by the evidence beside it
(:mod:`harness.causes.evidence`), and how much it matters.

The first rule that applies decides (each says what it rests on):

1. ``unsupported``: an ``error`` whose exception is one the framework raises to refuse a
   transformation it does not offer (its back end lists them, each a type or a type with
   the start of its message: :attr:`harness.backends.spec.BackendSpec.refusals`, matched
   by :func:`refused`); any other exception is a
   crash of the method (``method``), keyed by the framework, the methods and the
   exception (its type and a digest of its text, :func:`crash_id`: the id names the
   crash, the statement quotes its message), whichever implementation reaches it
   (TensorFlow's forward-over-reverse raising ``IndexError: list index out of range``
   under tf.function in the gradients of ``pow``, ``maximum``, ``abs`` and ``xlogy`` is
   one crash), unless the
   value itself raises it (order 0): then the framework's kernel raises, whatever the
   method, and that crash at every order of the case's implementation and dtype is one
   ``kernel`` root cause keyed by the framework and the exception
   (:func:`harness.causes.roots.classify_findings` sees the orders together);
2. ``formula`` of finite differences: only the finite differences fail (the stencil's
   values overflow, underflow or cancel); autodiff is the fix. The subject is the
   stencil itself (:data:`FINITE_DIFFERENCES`), whatever the case: the same central
   difference with the same step rule fails the same way on every function;
3. ``mode``: the finding holds only in compiled modes (not eager), and the other modes
   get most of its points right (a compiler's or a graph rewrite's effect); where the
   localisation, run in that compiled mode, finds one primitive failing alone there, the
   subject is that primitive in that framework and mode (``div@tensorflow:xla``: the
   same rewrite of one primitive, whichever implementation contains it), else the
   implementation under the one compiler behind those modes (``ratio.stable_division@XLA``:
   TensorFlow's ``jit_compile=True`` and ``jax.jit`` compile the same graph with XLA;
   the back ends declare their compilers), else the implementation in that framework;
4. ``rule``: a hand-written rule on its path is not the derivative, checked exactly at
   its worst point (:mod:`harness.causes.rules`);
5. ``kernel``: a primitive judged on its own at the arguments it receives is wrong there
   while its value is right: the framework's rule for it; or its own value is wrong
   there: its value kernel, another mechanism (subject ``softplus:value``);
   ``kink``: else, at most of the failing points a kink primitive's arguments tie (a
   zero of ``abs``, a tie of ``maximum``/``minimum``, a ``where`` whose condition's sides
   are equal): the derivative exists there only as the two sides together, and the
   framework took a one-sided derivative (:mod:`harness.causes.kinks`), keyed by the
   implementation and the primitive, whatever the framework;
   ``platform``: else, at most of the failing points a primitive's derivative alone is
   subnormal and the platform's flush writes it as 0 (``flushed``), which the rest of
   the chain rule turns into the failure: keyed by the primitive, whatever the framework
   and implementation (``log:flush``: naive softplus's ``1/(1 + exp(x))`` in reverse
   mode, in every framework that flushes);
6. ``rule``: the implementation's own rule is right in exact arithmetic but its value is
   lost in floats (an unstable rule), unless the value is a bare 0 where another framework
   gets these points right by the same methods (as in 8): that framework drops the rule's
   derivative (``framework``);
7. ``method``: another exact method gets most of its points right. The subject is the
   implementation, whatever the framework: forward mode's chain rule over one expression
   is the same computation in every framework, so forward mode failing where reverse
   mode is right in TensorFlow and in JAX is one mechanism;
8. ``framework``: another back end gets most of its points right by the same methods
   (nearly all of them, :data:`DECISIVE`, where the value is finite with bits lost:
   below that, each framework rounds at the tolerance's edge in its own places), unless
   the localisation judged every primitive right at its own arguments and the value is
   finite with bits lost (severity 2 or 1): then the framework's rules are right there
   and only its rounding differs, which is the expression's (``formula``);
9. ``formula``: every primitive is right at its own arguments; the expression overflows,
   underflows or cancels (the intermediate is named where one lies beyond the dtype).

Severity by impact, highest first (:func:`severity`): 4, a NaN, an infinity or a wrong
sign at inputs well inside the dtype's normal range; 3, a value with at most 4 correct
bits (``wrong``, ``zero``, an ``inaccurate`` 2.4 for 4.2) or a non-finite value at the
range's ends; 2, bits lost (more than 4 right); 1, a finite value whose truth lies far
below the function's own scale (``|truth| <= 4 eps`` times the largest truth of the
lower orders at that point) and whose error does too (``|got - truth| <= 64 eps`` times
it): rounding noise of the lower orders, such as 4.5e-16 for a true -8e-20 next to a
first derivative of 1, where 7.03 for a true 0 is a wrong value; 0 for an unsupported
combination.
"""

from __future__ import annotations

import json
import math

import mpmath

from harness.causes.kinks import kink_names
from harness.numerics.floats import FORMATS

__all__ = [
    "CASE_KINDS",
    "FINITE_DIFFERENCES",
    "FRAMEWORK_KINDS",
    "ID_PATTERN",
    "KINDS",
    "SEVERITY_LABELS",
    "crash_id",
    "decide",
    "outcome_class",
    "refused",
    "signature",
    "severity",
]

#: Framework bugs a maintainer should hear about first, then problems in the case's own
#: code, then what the framework does not offer and the platform's flush (an
#: intermediate's subnormal derivative written as 0, amplified into a failure).
FRAMEWORK_KINDS = ("kernel", "mode", "method", "framework")
CASE_KINDS = ("kink", "formula", "rule")
KINDS = (*FRAMEWORK_KINDS, *CASE_KINDS, "unsupported", "platform")

SEVERITY_LABELS = {
    4: "non-finite or wrong sign at ordinary inputs",
    3: "no correct bits to speak of",
    2: "bits lost",
    1: "noise at the function's own scale",
    0: "not offered by the framework",
}

#: What a root cause's id looks like: a kind, then short words of letters, digits and
#: ``_ . @ + -`` joined by colons (no spaces, no message), at most 120 characters.
ID_PATTERN = r"^[a-z]+(:[A-Za-z0-9_.@+\-]+){1,5}$"
ID_LENGTH = 120

#: The subject of every finite-difference-only finding (one stencil, one step rule).
FINITE_DIFFERENCES = "finite_difference"

#: Noise at the function's own scale (severity 1): a truth within ``NOISE_TRUTH`` eps of
#: the scale, and the value within ``NOISE_ERROR`` eps of the truth (the rounding of
#: terms of the scale's size, compounded over a few operations of a fourth derivative);
#: a larger error is a wrong value, whatever the truth.
NOISE_TRUTH = 4
NOISE_ERROR = 64

_CLASSES = {"nan": "nonfinite", "inf": "nonfinite", "zero": "wrong", "inaccurate": "wrong"}
MAJORITY = 0.5
#: What another framework must get right of a finding's points for bits lost (not a wrong
#: value) to be the framework's own (below it, each framework rounds at the tolerance's
#: edge in its own places).
DECISIVE = 0.9


def outcome_class(outcome: str) -> str:
    """``nonfinite`` (nan, inf), ``wrong`` (a finite value off the truth: wrong, zero,
    inaccurate, the same mechanism at different depths; the severity tells how far),
    ``missing``, ``error``."""
    return _CLASSES.get(outcome, outcome)


def _shares(text) -> dict[str, float]:
    return json.loads(text) if isinstance(text, str) and text else {}


def decide(f, refusals: tuple[str, ...], compilers: dict | None = None) -> tuple[str, str]:
    """``(kind, subject)`` of one finding (a mapping or row with the findings' columns and
    :data:`harness.causes.evidence.EVIDENCE_COLUMNS`); ``refusals``: the exceptions its
    back end refuses a transformation with (:func:`refused`); ``compilers``: its compiled
    modes' compilers (``{"xla": "XLA"}``). The subject is the primitive (``softplus``),
    the exception (``TypeError-3fa2b1``, :func:`crash_id`) or the implementation
    (``case.implementation``; for a value, the case's first implementation of the same
    expression) the root cause is keyed by."""
    # A value (order 0) is its expression's, whichever implementation wraps it in rules.
    same = f.get("same_value")
    owner = f"{f['case']}.{same if isinstance(same, str) and same else f['implementation']}"
    if f["outcome"] == "error":
        texts = [t for t in str(f.get("error_text") or "").splitlines() if t]
        if texts and all(refused(t, refusals) for t in texts):
            return "unsupported", crash_id(texts[0])
        if texts:  # one crash, whichever implementation reaches it
            methods = "+".join(f["methods"].split(", "))
            return "method", f"{f['backend']}:{methods}:{crash_id(texts[0])}"
        return "method", f"{owner}@{f['backend']}"
    if f["methods"] == "finite_difference":
        return "formula", FINITE_DIFFERENCES
    # One framework's compiler, one framework's rules: the framework is in the subject.
    mine = f"{owner}@{f['backend']}"
    modes = _shares(f.get("modes_ok"))
    eager = "eager" in f["modes"].split(", ")
    if not eager and modes and sum(modes.values()) / len(modes) >= MAJORITY:
        # Localised in the compiled mode: the primitive whose derivative it changes.
        if f.get("culprit") and f.get("culprit_mode", "eager") != "eager":
            return "mode", f"{f['culprit']}@{f['backend']}:{f['culprit_mode']}"
        # A primitive's value wrong in that mode alone: the compiler's own kernel (XLA's
        # cosh, which JAX runs in every mode and TensorFlow under jit_compile): one
        # mechanism with the same kernel's failures in the frameworks that run it.
        if f.get("value_wrong") and not f.get("culprit"):
            return "kernel", f"{f['value_wrong']}:value"
        # One compiler behind every mode it fails in (XLA under TensorFlow's jit_compile
        # and under jax.jit): the same graph compiled by it, whichever framework built it.
        behind = {(compilers or {}).get(m, "") for m in f["modes"].split(", ")}
        if len(behind) == 1 and "" not in behind:
            return "mode", f"{owner}@{behind.pop()}"
        return "mode", mine
    # A value (order 0) goes through no derivative rule, right or wrong.
    rules = json.loads(f.get("rules") or "[]") if int(f.get("order", 1) or 0) else []
    if any(not r["right"] for r in rules):
        return "rule", owner
    if f.get("culprit"):
        return "kernel", str(f["culprit"])
    if f.get("value_wrong"):  # the value kernel, another mechanism than its rule
        return "kernel", f"{f['value_wrong']}:value"
    if isinstance(f.get("kink"), str) and f["kink"]:  # a one-sided slope at a kink (causes.kinks)
        return "kink", f"{owner}:{kink_names(f['kink'])}"
    if isinstance(f.get("flushed"), str) and f["flushed"]:  # the platform's flush, amplified
        return "platform", f"{json.loads(f['flushed'])['name']}:flush"
    backends = _shares(f.get("backends_ok"))
    # Bits lost where another framework gets only some of the points right is each
    # framework's rounding at the tolerance's edge, not a different rule: it takes
    # another framework right nearly everywhere to say the framework differs.
    needed = DECISIVE if _lost(f) else MAJORITY
    other_right = bool(backends) and max(backends.values()) >= needed and not _rounding(f)
    if any(r["rule"] == f["implementation"] for r in rules):
        # Right in exact arithmetic: lost in floats (unstable), unless the framework gives
        # a bare 0 where another framework going through the same rule gets these points
        # right: that framework drops the rule's derivative (PyTorch's second derivative
        # through an autograd.Function's jvp is 0 where JAX's is right).
        dropped = f["outcome"] == "zero" and other_right
        return ("framework", mine) if dropped else ("rule", owner)
    methods = _shares(f.get("methods_ok"))
    if methods and max(methods.values()) >= MAJORITY:
        return "method", owner
    if other_right:
        return "framework", mine
    return "formula", owner


def _lost(f) -> bool:
    """A finite value with bits lost (severity 2 or 1), not a wrong one."""
    return outcome_class(f["outcome"]) == "wrong" and severity(f) <= 2


def _rounding(f) -> bool:
    """Every primitive judged right at its own arguments (some of the finding's values
    localised, no culprit, no wrong value) and a finite value with bits lost: what
    differs is rounding, not a rule."""
    localised = f.get("localised")
    try:
        described = float(localised) > 0
    except (TypeError, ValueError):
        described = False
    if not described or f.get("culprit") or f.get("value_wrong"):
        return False
    return _lost(f)


def refused(text: str, refusals: tuple[str, ...]) -> bool:
    """Whether the exception ``text`` (``Type: message``) is one of ``refusals``: an entry
    that is a type name matches every exception of that type, one with a message
    (``TypeError: can't apply forward-mode autodiff``) only the exceptions it begins."""
    kind = text.split(":", 1)[0].strip()
    return any(text.startswith(r) if ":" in r else kind == r for r in refusals)


def signature(text: str) -> str:
    """An exception's text without what varies from case to case (shapes, sizes)."""
    import re

    first = text.splitlines()[0] if text else ""
    first = re.sub(r"\[[0-9, ]*\]", "[...]", first)
    first = re.sub(r"float(16|32|64)|bfloat16", "<dtype>", first)
    return first[:200]


def crash_id(text: str) -> str:
    """A short, stable name for an exception: its type and six hex digits of its
    :func:`signature` (``TypeError-3fa2b1``), so that two exceptions of one type with
    different messages stay two crashes, and an id never carries the message (which the
    statement quotes)."""
    import hashlib

    sig = signature(text)
    kind = sig.split(":", 1)[0].strip().split(".")[-1]
    kind = "".join(ch for ch in kind if ch.isalnum() or ch == "_")[:40] or "Exception"
    return f"{kind}-{hashlib.sha1(sig.encode()).hexdigest()[:6]}"


def severity(f) -> int:
    """The finding's impact tier (see the module's docstring)."""
    if f["outcome"] == "error":
        return 3 if f.get("kind") != "unsupported" else 0
    if f["outcome"] == "missing":
        return 3
    dtype = f["dtype"]
    fmt = FORMATS[dtype]
    got = float(f["worst_got"]) if f.get("worst_got") is not None else math.nan
    truth = _mpf(f.get("worst_truth"))
    scale = float(f.get("scale")) if f.get("scale") is not None else math.nan
    inputs = json.loads(f["worst_inputs"]) if f.get("worst_inputs") else {}
    ordinary = all(_ordinary(v, fmt) for v in inputs.values())
    if not math.isfinite(got):
        return 4 if ordinary else 3
    if truth is not None and math.isfinite(scale) and scale > 0:
        with mpmath.workdps(30):
            # Noise: the truth and the error both at the rounding of the function's scale.
            small = abs(truth) <= NOISE_TRUTH * fmt.eps * scale
            if small and abs(mpmath.mpf(got) - truth) <= NOISE_ERROR * fmt.eps * scale:
                return 1
    if truth is not None and truth != 0 and got != 0 and (got > 0) != (truth > 0):
        return 4 if ordinary else 3
    if truth is None or truth == 0:
        return 3
    with mpmath.workdps(30):
        rel = abs((mpmath.mpf(got) - truth) / truth)
        correct = -float(mpmath.log(rel, 2)) if rel > 0 else math.inf
    return 3 if correct <= 4 else 2


def _ordinary(value: float, fmt) -> bool:
    """Well inside the normal range: between the square roots of its ends (or 0)."""
    a = abs(float(value))
    return a == 0 or math.sqrt(fmt.smallest_normal) <= a <= math.sqrt(fmt.max_finite)


def _mpf(text):
    try:
        with mpmath.workdps(40):
            value = mpmath.mpf(str(text))
        return value if mpmath.isfinite(value) else None
    except (ValueError, TypeError):
        return None
