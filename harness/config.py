"""Study configuration: defaults, validation, and the settings that apply to one case.

The defaults live in ``harness/study_defaults.yaml``. A study passes its own file
(``--config config/study.yaml``); a case may narrow dtypes, methods and modes and add
tolerance overrides (each with a reason) on top.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from .case_schema import CONFIG_SCHEMA, DTYPES, METHODS, MODES
from .cases import Case
from .yaml_lines import YamlProblem, load

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
    data = _read(DEFAULTS)
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
) -> Settings:
    """The case's settings: the config's lists, narrowed by the case, then by the caller."""

    def pick(all_: tuple[str, ...], configured: list[str], in_case, asked) -> tuple[str, ...]:
        chosen = [x for x in configured if in_case is None or x in in_case]
        if asked:
            chosen = [x for x in chosen if x in asked]
        return tuple(x for x in all_ if x in chosen)

    return Settings(
        dtypes=pick(DTYPES, config.dtypes, case.dtypes, dtypes),
        methods=pick(METHODS, config.methods, case.methods, methods),
        modes=pick(MODES, config.modes, case.modes, modes),
        precision=case.reference.precision or config.precision,
        verify_digits=config.verify_digits,
        max_precision=max(config.max_precision, case.reference.precision or 0),
        max_points=max_points or config.data.get("max_points"),
        tolerances=config.tolerances,
        overrides=case.tolerances,
    )
