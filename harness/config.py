"""Study configuration: defaults, validation, and the settings that apply to one case.

The defaults live in ``harness/study_defaults.yaml``. A study passes its own file
(``--config config/study.yaml``); a case may narrow dtypes, methods and modes and add
tolerance overrides (each with a reason) on top.

Two settings. ``full`` runs the study's lists as they are (narrowed by the case's own
``dtypes``/``methods``/``modes``). ``quick``, the default study, also applies the
``quick`` block of the study settings and then the case's own ``quick`` block, so a
case whose full matrix is heavy (TensorFlow's nested forward mode at order 4 costs
tens of seconds and over a gigabyte per dtype) says what its quick run keeps.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from harness.cases.model import Case, Narrowing
from harness.cases.schema import (
    BACKENDS,
    CONFIG_SCHEMA,
    DEFAULT_BACKEND,
    DTYPES,
    MAX_ORDER,
    METHODS,
    MODES,
    SPLIT_KEYS,
)
from harness.cases.yaml_lines import YamlProblem, load

__all__ = ["ConfigError", "StudyConfig", "Settings", "load_config", "settings_for"]

DEFAULTS = Path(__file__).with_name("study_defaults.yaml")


class ConfigError(ValueError):
    """An invalid configuration file; the message lists every problem."""


@dataclass(frozen=True)
class StudyConfig:
    data: dict[str, Any]
    path: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()[:16]

    def __getattr__(self, key: str) -> Any:
        try:
            return self.data[key]
        except KeyError:
            raise AttributeError(key) from None


def load_config(
    path: str | Path | None = None, overrides: dict[str, Any] | None = None
) -> StudyConfig:
    """Load the defaults, then ``path`` on top (top-level keys replace), then ``overrides``.

    Raises
    ------
    ConfigError
        Naming file, line and key of every problem.
    """
    data = _defaults()
    source = str(DEFAULTS)
    lines: dict = {}
    if path is not None:
        located = _located(Path(path))
        data.update(located.data or {})
        lines = located.lines
        source = str(path)
    if overrides:
        data.update(overrides)
    problems = []
    for err in jsonschema.Draft202012Validator(CONFIG_SCHEMA).iter_errors(data):
        key = ".".join(map(str, err.path))
        line = lines.get(tuple(err.path)[:1], 1)
        problems.append(f"{source}:{line}: {key or '(file)'}: {err.message}")
    if problems:
        raise ConfigError("\n".join(problems))
    return StudyConfig(data, source)


def _located(path: Path):
    try:
        located = load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}:0: (file): cannot read: {exc}") from None
    except YamlProblem as exc:
        raise ConfigError(f"{path}:{exc.line}: (file): {exc.message}") from None
    if located.problems:
        raise ConfigError(
            "\n".join(f"{path}:{ln}: {'.'.join(map(str, p))}: {m}" for ln, p, m in located.problems)
        )
    if located.data is not None and not isinstance(located.data, dict):
        raise ConfigError(f"{path}:1: (file): a configuration must be a mapping")
    return located


def _read(path: Path) -> dict[str, Any]:
    return dict(_located(path).data or {})


_DEFAULTS_READ: dict[bytes, dict[str, Any]] = {}


def _defaults() -> dict[str, Any]:
    """The defaults file, parsed once per text of it in a process (the workflow loads
    the configuration once per case file when it is parsed), as a copy to change."""
    try:
        key = DEFAULTS.read_bytes()
    except OSError:
        return _read(DEFAULTS)  # says which file could not be read
    if key not in _DEFAULTS_READ:
        _DEFAULTS_READ.clear()
        _DEFAULTS_READ[key] = _read(DEFAULTS)
    return copy.deepcopy(_DEFAULTS_READ[key])


@dataclass(frozen=True)
class Settings:
    """What one case runs with, after the case's own narrowing."""

    dtypes: tuple[str, ...]
    methods: tuple[str, ...]
    modes: tuple[str, ...]
    precision: int
    verify_digits: int
    max_precision: int
    max_points: int | None
    tolerances: dict[str, list[float]]
    overrides: tuple  # the case's Tolerance entries, in order
    setting: str = "full"
    max_order: dict[str, int] = field(default_factory=dict)  # per method; absent: 4
    backends: tuple[str, ...] = (DEFAULT_BACKEND,)  # the frameworks the case runs in
    split: tuple[str, ...] = ()  # what evaluation jobs are split by (harness.stages.pieces)
    localise: bool = True  # failing derivatives localised to a primitive (harness.causes)
    batch: int | None = None  # every evaluation batch padded to this many points at least
    compilation_cache: bool = True  # JAX's compiled programs kept across processes
    #: What the settings leave out and why, one sentence each ("dtypes float16: the
    #: quick setting leaves them out; --setting full runs them"): a command says them.
    left_out: tuple[str, ...] = ()

    @property
    def highest_order(self) -> int:
        """The highest order any selected method computes."""
        return max((self.max_order.get(m, MAX_ORDER) for m in self.methods), default=MAX_ORDER)

    def tolerance(self, dtype: str, order: int) -> tuple[float, str]:
        """Max ulps for ``dtype`` at ``order``, and the reason when a case overrides it."""
        ulps, reason = float(self.tolerances[dtype][order]), ""
        for t in self.overrides:
            if (t.dtypes is None or dtype in t.dtypes) and (t.orders is None or order in t.orders):
                ulps, reason = t.ulps, t.reason
        return ulps, reason


def settings_for(
    case: Case,
    config: StudyConfig,
    dtypes: list[str] | None = None,
    methods: list[str] | None = None,
    modes: list[str] | None = None,
    max_points: int | None = None,
    backends: list[str] | None = None,
    orders: list[int] | None = None,
) -> Settings:
    """The case's settings: the config's lists, narrowed by the case, then (in the
    ``quick`` setting) by the config's and the case's ``quick`` blocks, then by the caller.

    Lists narrow by intersection; ``max_points`` and each method's ``max_order`` by the
    smallest value given anywhere. What the caller asks for runs: an asked dtype, method,
    mode or back end passes the study's lists and the quick blocks (only the case's own
    list bounds it), and asked ``orders`` lift the quick setting's caps on them. What is
    left out all the same, and what a setting leaves out that was not asked, is said in
    :attr:`Settings.left_out`.
    """
    setting = config.data.get("setting", "full")
    narrowings = []
    if setting == "quick":
        narrowings = [n for n in (Narrowing.from_data(config.data.get("quick")), case.quick) if n]
    left: list[str] = []

    def pick(field_: str, all_: tuple[str, ...], in_case, asked) -> tuple[str, ...]:
        if asked:
            chosen = [x for x in asked if in_case is None or x in in_case]
            refused = [x for x in asked if x not in chosen]
            if refused:
                left.append(
                    f"{field_} {', '.join(refused)}: the case runs only "
                    f"{', '.join(in_case)} (its own {field_!r})"
                )
            return tuple(x for x in all_ if x in chosen)
        chosen = [x for x in config.data.get(field_, all_) if in_case is None or x in in_case]
        before = list(chosen)
        for n in narrowings:
            keep = getattr(n, field_)
            if keep is not None:
                chosen = [x for x in chosen if x in keep]
        if len(chosen) < len(before):
            dropped = ", ".join(x for x in before if x not in chosen)
            left.append(
                f"{field_} {dropped}: the quick setting leaves them out "
                f"(--setting full or --{field_} runs them)"
            )
        return tuple(x for x in all_ if x in chosen)

    points = [max_points, config.data.get("max_points"), *(n.max_points for n in narrowings)]
    points = [p for p in points if p is not None]
    chosen_methods = pick("methods", METHODS, case.methods, methods)
    max_order = {}
    top = max(orders or [0])
    for m in chosen_methods:
        caps = [dict(n.max_order).get(m, MAX_ORDER) for n in narrowings if n.max_order]
        cap = min(caps, default=MAX_ORDER)
        if cap < MAX_ORDER and top > cap:  # asked for: it runs
            cap = MAX_ORDER
        if cap < MAX_ORDER:
            max_order[m] = cap
            if not orders:
                left.append(
                    f"{m} above order {cap}: the quick setting leaves it out "
                    "(--setting full or --orders runs it)"
                )
    return Settings(
        dtypes=pick("dtypes", DTYPES, case.dtypes, dtypes),
        methods=chosen_methods,
        modes=pick("modes", MODES, case.modes, modes),
        precision=case.reference.precision or config.precision,
        verify_digits=config.verify_digits,
        max_precision=max(config.max_precision, case.reference.precision or 0),
        max_points=min(points) if points else None,
        tolerances=config.tolerances,
        overrides=case.tolerances,
        setting=setting,
        max_order=max_order,
        backends=pick("backends", BACKENDS, getattr(case, "backends", None), backends),
        split=tuple(
            k for k in SPLIT_KEYS if k in (config.data.get("split") or {}).get(setting, ())
        ),
        localise=bool(config.data.get("localise", True)),
        batch=config.data.get("batch"),
        compilation_cache=bool(config.data.get("compilation_cache", True)),
        left_out=tuple(left),
    )
