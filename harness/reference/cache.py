"""The reference cache: verified values per case on disk, keyed by what they depend on.

One Parquet file per case and settings (``<case>-<key>.parquet``) and, beside it, one
shard per evaluation piece (``<case>-<key>.shards/<piece>.parquet``) for the values its
bisection adds, so no two jobs write the same file. Values are kept in binary
(:func:`encode_value`); a damaged file or entry is said, discarded and recomputed.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import marshal
import sys
from pathlib import Path

import mpmath
import numpy as np
import pandas as pd

from harness.cases.model import Case
from harness.reference.certify import Ball
from harness.reference.verify import REFERENCE_VERSION, ReferenceSettings, Verified
from harness.registered import catalogue as registry
from harness.results import ResultsError, read_table, write_table

__all__ = [
    "BALL_SUFFIX",
    "KEEP_BITS",
    "cache_key",
    "cache_path",
    "decode_ball",
    "decode_value",
    "encode_ball",
    "encode_value",
    "encode_verified",
    "load_cache",
    "read_cache",
    "registered_source",
    "save_cache",
    "shard_dir",
]


def cache_key(case: Case, settings: ReferenceSettings) -> str:
    """What a cached value depends on besides its point and partial: the case's function,
    reference and ``functions:`` bodies, the source of a registered reference's module,
    the precision settings and the reference arithmetic's version."""
    blob = json.dumps(
        {
            "let": case.raw.get("let"),
            "function": case.raw.get("function"),
            "reference": case.raw.get("reference"),
            "functions": case.raw.get("functions"),
            "registered": registered_source(case),
            "inputs": list(case.input_names),
            "precision": settings.precision,
            "verify": settings.verify_digits,
            "max": settings.max_precision,
            "version": REFERENCE_VERSION,
        },
        sort_keys=True,
    ).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def registered_source(case: Case) -> str | None:
    """A digest of the source file that defines the case's registered reference; for a
    user's mpmath function given to ``harness.check`` (the factory's ``__wrapped__``), of
    that function's code and the values it closes over (two lambdas of one file differ)."""
    name = case.reference.registered
    if not name:
        return None
    factory = registry.get_reference(name).factory
    user = getattr(factory, "__wrapped__", None)
    if user is not None:
        code = getattr(user, "__code__", None)
        cells = [repr(c.cell_contents) for c in getattr(user, "__closure__", None) or ()]
        source = (marshal.dumps(code) if code else repr(user).encode()) + repr(cells).encode()
    else:
        source = Path(inspect.getsourcefile(factory)).read_bytes()
    return hashlib.sha256(source).hexdigest()


# Cached values keep the verified value in binary, cut to KEEP_BITS by rounding to odd
# (the last kept bit is set when any dropped bit was): rounding that once more to any
# format of at most KEEP_BITS - 2 bits gives what rounding the full value directly
# gives, ties included (a decimal string would be a second rounding: 3·2^-150, a tie in
# float32, came back below it and rounded to 2^-149 instead of 2^-148).
KEEP_BITS = 192


def encode_value(value) -> str:
    """An mpf as exact text: ``[-]0x<mantissa>p<exponent>``, ``0``, ``inf``, ``-inf``,
    ``nan``; a mantissa over :data:`KEEP_BITS` bits is rounded to odd."""
    sign, man, exp, bc = value._mpf_
    if not man:
        return "0" if exp == 0 and bc == 0 else mpmath.nstr(value)
    if bc > KEEP_BITS:
        cut = bc - KEEP_BITS
        kept = man >> cut
        if man & ((1 << cut) - 1):
            kept |= 1
        man, exp = kept, exp + cut
    return f"{'-' if sign else ''}{man:#x}p{exp}"


def decode_value(text: str):
    """The mpf :func:`encode_value` wrote, exactly (no rounding at the ambient precision)."""
    parts = _mantissa_exponent(text)
    if parts is None:
        return mpmath.mpf(text)  # 0, inf, -inf, nan
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(*parts))


def _mantissa_exponent(text: str) -> tuple[int, int] | None:
    """``text``'s mantissa and exponent (ValueError where it has none to parse); None for
    mpmath's own text (0, inf, -inf, nan)."""
    if "p" not in text:
        return None
    mantissa, exponent = text.split("p")
    return int(mantissa, 16), int(exponent)


def encode_verified(v: Verified) -> tuple[str, float, int, str]:
    if v.value is None:
        return ("", float(v.digits), int(v.precision), v.message)
    return (encode_value(v.value), float(min(v.digits, 1e6)), int(v.precision), v.message)


def cache_path(cache_dir: Path, case: Case, settings: ReferenceSettings) -> Path:
    return Path(cache_dir) / f"{case.id}-{cache_key(case, settings)}.parquet"


def shard_dir(cache_dir: Path, case: Case, settings: ReferenceSettings) -> Path:
    """The folder of the shards that evaluation pieces add beside the case's cache."""
    return Path(cache_dir) / f"{case.id}-{cache_key(case, settings)}.shards"


def load_cache(cache_dir: Path | None, case: Case, settings: ReferenceSettings) -> dict:
    """The case's cached values: its cache file and every shard beside it."""
    if cache_dir is None:
        return {}
    out = read_cache(cache_path(cache_dir, case, settings), case)
    for shard in sorted(shard_dir(cache_dir, case, settings).glob("*.parquet")):
        for key, entry in read_cache(shard, case).items():
            out.setdefault(key, {}).update(entry)
    return out


def read_cache(path: Path, case: Case) -> dict:
    """The entries of one cache file. A file that cannot be read, or an entry whose value
    does not decode, is discarded and said on stderr: it is recomputed, and the file
    rewritten when the store saves (never trusted, never a traceback on every run)."""
    if not path.exists():
        return {}
    try:
        frame = read_table(path)
        names = list(case.input_names)
        records = frame[[*names, "partial", "value", "digits", "precision", "message"]]
    except (ResultsError, KeyError) as exc:
        _discarded(path, f"unreadable: {exc}")
        return {}
    out: dict = {}
    bad = 0
    # Column by column (a record per row costs more than the rest of the reading).
    columns = [records[c].tolist() for c in ("value", "digits", "precision", "message", "partial")]
    inputs = [records[n].tolist() for n in names]
    for i, (value, digits, precision, message, partial) in enumerate(zip(*columns)):
        try:
            if value:
                for part in value.split("|"):  # decode_value's parse, no mpf built
                    if _mantissa_exponent(part) is None:
                        mpmath.mpf(part)
            entry = (value, float(digits), int(precision), message)
            key = tuple(float(column[i]) for column in inputs)
        except (TypeError, ValueError):
            bad += 1
            continue
        out.setdefault(key, {})[partial] = entry
    if bad:
        _discarded(path, f"{bad} {'entry that does' if bad == 1 else 'entries that do'} not decode")
    return out


def _discarded(path: Path, reason: str) -> None:
    print(
        f"harness: reference cache {path}: {reason}; discarded, the values are recomputed",
        file=sys.stderr,
    )


def save_cache(path: Path, case: Case, settings: ReferenceSettings, cache: dict) -> None:
    names = list(case.input_names)
    rows = []
    for key, entry in cache.items():
        for label, (text, digits, precision, message) in entry.items():
            if isinstance(text, Ball):
                text = encode_ball(text)[0]
            rows.append(
                {
                    **dict(zip(names, key)),
                    "partial": label,
                    "value": text,
                    "digits": digits,
                    "precision": precision,
                    "message": message,
                }
            )
    frame = pd.DataFrame(rows)
    for n in names:
        frame[n] = frame[n].astype(np.float64)
    write_table(
        frame,
        path,
        {"kind": "reference-cache", "case": case.id, "key": cache_key(case, settings)},
    )


#: A ball is cached beside its partial's verified value, under the label with this suffix.
BALL_SUFFIX = "@arb"


def _encode_bound(value) -> str:
    """An exact bound (an mpf or an exact arb) as exact text, every bit kept: a ball read
    back from the cache is the ball that was computed (cut, it might no longer decide
    a value it decided: 574 + e^-574 sits just above a bfloat16 tie)."""
    if isinstance(value, mpmath.mpf):
        sign, man, exp, _ = value._mpf_
    else:  # an exact, finite arb: read its bits directly
        m, e = value.man_exp()
        man, exp = int(m), int(e)
        sign, man = man < 0, abs(man)
    if not man:
        return "0"
    return f"{'-' if sign else ''}{man:#x}p{exp}"


def encode_ball(ball: Ball) -> tuple[str, float, int, str]:
    """A ball as a cache entry: ``lower|upper`` (exact), its bits, the reason where there
    is none."""
    if not ball.bounded:
        return ("", 0.0, int(ball.bits), ball.reason)
    lower, upper = ball.exact_bounds()
    text = f"{_encode_bound(lower)}|{_encode_bound(upper)}"
    return (text, 0.0, int(ball.bits), ball.reason)


def decode_ball(entry: tuple) -> Ball:
    text, _, bits, reason = entry
    if not text:
        return Ball(None, None, int(bits), reason)
    lower, upper = text.split("|")
    return Ball(decode_value(lower), decode_value(upper), int(bits), reason)
