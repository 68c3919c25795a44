"""The points ``harness.check`` sweeps an input over, as a case file's input spec
(:mod:`harness.cases.schema`): ``harness.sweep.log(1e-30, 1e30, signs="both")`` is the
case file's ``log: {from: 1e-30, to: 1e30, count: 200, signs: both}``. A plain list of
numbers is the case file's ``values:``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from numbers import Real

__all__ = ["DEFAULT", "linear", "log", "random", "spec", "tie", "values"]

#: What an input is swept over when the caller names no sweep: the magnitudes a float32
#: holds with room for its derivatives' powers, of both signs.
COUNT = 200


def _include(include: Iterable[float]) -> dict:
    extra = [float(v) for v in include]
    return {"include": extra} if extra else {}


def log(
    start: float,
    stop: float,
    count: int = COUNT,
    signs: str = "positive",
    include: Iterable[float] = (),
) -> dict:
    """Magnitudes log-spaced from ``start`` to ``stop`` (both > 0); ``signs``: positive,
    negative or both (mirrored); ``include``: points added (the published ones)."""
    return {
        "log": {
            "from": float(start),
            "to": float(stop),
            "count": int(count),
            "signs": signs,
            **_include(include),
        }
    }


def linear(start: float, stop: float, count: int = COUNT, include: Iterable[float] = ()) -> dict:
    """Evenly spaced values from ``start`` to ``stop`` inclusive."""
    return {
        "linear": {
            "from": float(start),
            "to": float(stop),
            "count": int(count),
            **_include(include),
        }
    }


def random(
    start: float, stop: float, count: int = COUNT, seed: int = 0, signs: str = "positive"
) -> dict:
    """Seeded log-uniform magnitudes in [``start``, ``stop``]."""
    return {
        "random": {
            "from": float(start),
            "to": float(stop),
            "count": int(count),
            "seed": int(seed),
            "signs": signs,
        }
    }


def values(*points: float) -> dict:
    """These points only (each its own: no edge is bisected between two of them)."""
    return {"values": [float(v) for v in points]}


def tie(name: str) -> dict:
    """The value of input ``name`` at every point (``a = b``: ``{"b": tie("a")}``)."""
    return {"tie": str(name)}


DEFAULT = log(1e-30, 1e30, signs="both")


def spec(given) -> dict:
    """An input's spec from what the caller gave: a sweep (a mapping, as above), one number
    or a sequence of numbers (``values``)."""
    if isinstance(given, Mapping):
        return dict(given)
    if isinstance(given, Real):
        return values(float(given))
    if isinstance(given, (str, bytes)):
        pass
    elif isinstance(given, Sequence) or hasattr(given, "tolist"):
        items = given.tolist() if hasattr(given, "tolist") else list(given)
        items = items if isinstance(items, list) else [items]
        return values(*items)
    raise TypeError(
        f"an input's points: a sweep (harness.sweep.log(...)) or a list of numbers, not "
        f"{type(given).__name__}"
    )
