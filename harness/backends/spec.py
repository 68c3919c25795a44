"""What the registry knows of one back end (:class:`BackendSpec`), written in the back end's
own folder (``<name>/spec.py``) and collected by :mod:`harness.backends.catalogue`.

A spec is data: it imports no framework and nothing of the harness above the numerics, so
the case schema, the study's settings and the command line read the back ends' names,
methods and modes from it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BackendSpec"]


@dataclass(frozen=True)
class BackendSpec:
    name: str  # as in results' ``backend`` column and the study's ``backends`` list
    title: str  # as a reader knows it
    package: str  # the importable package that must be installed
    module: str  # the harness module defining ``BACKEND`` (imports the framework)
    methods: tuple[str, ...]
    modes: tuple[str, ...]  # in the order a case's evaluation runs them
    dtypes: tuple[str, ...]
    install: str  # how to install it
    #: The exceptions the framework raises to refuse a transformation it does not offer
    #: (an ``unsupported`` combination, not a bug), each a type name (every exception of
    #: that type) or a type with the start of its message (only those):
    #: JAX's ``jvp`` of a ``custom_vjp`` function is a TypeError with its own message
    #: (other TypeErrors are crashes), a missing rule a NotImplementedError,
    #: ``jet`` through a custom rule an UnexpectedTracerError (``jet``'s missing rule, a
    #: bare KeyError, is raised again as a NotImplementedError by the JAX back end:
    #: :func:`harness.backends.jax.derivatives.refusing_jet`); PyTorch's forward mode
    #: through an ``autograd.Function`` without ``jvp`` a NotImplementedError.
    refusals: tuple[str, ...] = ("NotImplementedError",)
    #: The compiler behind each compiled mode: TensorFlow's ``jit_compile=True`` and
    #: ``jax.jit`` are both XLA, so one XLA rewrite failing in both is one mechanism.
    compilers: tuple[tuple[str, str], ...] = ()
    #: For each autodiff method, the kinds of hand-written rule (``gradient``: reverse,
    #: ``tangent``: forward) its derivatives go through; with ``one_custom_rule`` a function
    #: takes one of them, the first it has in that order (JAX: a ``custom_jvp`` function's
    #: reverse mode transposes its forward rule, a ``custom_vjp`` one has no forward rule).
    custom_rules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    one_custom_rule: bool = False
    #: Whether an eager call costs about the same whatever its batch (nothing compiled
    #: per shape): the exact edges' eager rounds then take up to
    #: :data:`harness.edges.bisection.WIDE` inputs per call. JAX's eager dispatch compiles
    #: each primitive for every new shape, so its rounds keep the sweep's batch, or take
    #: :data:`harness.edges.bisection.NARROW` inputs where the batch is smaller (softplus,
    #: the default study: its bisection's JAX calls 8.9-10.2 s wide, 2.8-3.6 s narrow).
    eager_wide: bool = True
    #: The module writing each finding's standalone script and probe command
    #: (``snippet``, ``probe_command``), where the back end has one.
    repro: str = ""
    #: The module computing one probed value its own way (``value``), where the back end
    #: has one; the others are probed through ``evaluate_case`` on a batch.
    probe: str = ""
    #: The module tracing a user's function into the harness's expression (``trace(fn,
    #: names)``) and computing both in float64 (``values``), where the back end has one
    #: (:mod:`harness.api.trace`).
    tracer: str = ""

    @property
    def snippet(self) -> str:
        """The module writing its reproducers' functions (``snippet.py`` beside ``module``)."""
        return self.module.rsplit(".", 1)[0] + ".snippet"

    @property
    def emitter(self) -> str:
        """The module writing an implementation as code to paste (``emit.py`` beside
        ``module``: :mod:`harness.backends.emit`)."""
        return self.module.rsplit(".", 1)[0] + ".emit"

    def rules_used(self, rules: list[dict], methods) -> list[dict]:
        """Of the checked ``rules`` on a finding's path (:func:`harness.causes.rules.
        check_rules`: each with its ``rule`` and ``kind``), those its ``methods`` go
        through here."""
        table = dict(self.custom_rules)
        kinds = [k for m in methods for k in table.get(m, ())]
        used = [r for r in rules if r.get("kind", "gradient") in kinds]
        if self.one_custom_rule:
            present: dict[str, set] = {}
            for r in used:
                present.setdefault(r["rule"], set()).add(r.get("kind", "gradient"))
            order = list(dict.fromkeys(kinds))
            chosen = {f: next(k for k in order if k in ks) for f, ks in present.items()}
            used = [r for r in used if r.get("kind", "gradient") == chosen[r["rule"]]]
        return used
