"""Rounding to each format, ordinals, ulps and bits (no TensorFlow)."""

from __future__ import annotations

import math

import ml_dtypes
import mpmath
import numpy as np
import pytest

from harness.numerics.floats import (
    FORMATS,
    bits_of_error,
    from_ordinal,
    is_subnormal,
    ordinal,
    round_mpf,
    to_format,
    ulps_between,
    ulps_beyond_range,
)

CASTS = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}


def _samples() -> np.ndarray:
    rng = np.random.default_rng(7)
    mags = 10.0 ** rng.uniform(-330, 308, 3000)
    edge = [
        0.0,
        -0.0,
        1e-45,
        7e-46,
        7.006492321624087e-46,
        3.4028235e38,
        3.40282357e38,
        3.4028236e38,
        65504.0,
        65519.99,
        65520.0,
        6e-8,
        2.9802322387695312e-08,
        1.0,
    ]
    return np.concatenate([mags * rng.choice([-1, 1], mags.size), edge])


@pytest.mark.parametrize("name", sorted(CASTS))
def test_round_mpf_matches_hardware_rounding_of_float64(name):
    x = _samples()
    x = x[~((x == 0) & np.signbit(x))]  # mpmath has no negative zero
    with np.errstate(all="ignore"):
        want = x.astype(CASTS[name]).astype(np.float64)
    got = np.array([round_mpf(mpmath.mpf(v), FORMATS[name]) for v in x])
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(to_format(x, name), want)


def test_round_mpf_rounds_once_not_twice():
    # 1 + 2**-24 + 2**-80 is just above the float32 midpoint between 1 and 1 + 2**-23:
    # correct rounding goes up; rounding to float64 first lands on the midpoint (ties to
    # even: down).
    with mpmath.workprec(200):
        v = mpmath.mpf(1) + mpmath.mpf(2) ** -24 + mpmath.mpf(2) ** -80
        assert round_mpf(v, FORMATS["float32"]) == 1 + 2.0**-23
        assert float(np.float32(float(v))) == 1.0
        # A true value beyond float64's range still rounds to float64's largest or inf.
        assert round_mpf(mpmath.mpf("1e400"), FORMATS["float64"]) == math.inf
        assert round_mpf(mpmath.mpf("-1e-400"), FORMATS["float64"]) == 0.0
        assert math.copysign(1, round_mpf(mpmath.mpf("-1e-400"), FORMATS["float64"])) == -1
        # Subnormal rounding in the target format itself.
        assert round_mpf(mpmath.mpf("1.5e-45"), FORMATS["float32"]) == 2.0**-149
        assert round_mpf(mpmath.mpf(2) ** -150, FORMATS["float32"]) == 0.0  # tie to even (0)
        assert round_mpf(mpmath.mpf(3) * mpmath.mpf(2) ** -150, FORMATS["float32"]) == 2.0**-148
    # At mpmath's default 53 bits the value still has all its bits and rounds once
    # (re-reading it at 53 bits would land on the tie).
    with mpmath.workprec(200):
        w = mpmath.mpf(1) + mpmath.mpf(2) ** -11 + mpmath.mpf(2) ** -60
    with mpmath.workprec(53):
        assert round_mpf(v, FORMATS["float32"]) == 1 + 2.0**-23
        assert round_mpf(v, FORMATS["float16"]) == 1.0  # below float16's midpoint 1 + 2**-11
        assert round_mpf(w, FORMATS["float16"]) == 1 + 2.0**-10


NUMPY_TYPES = {**CASTS, "float64": np.float64}


def _walk(name: str) -> np.ndarray:
    """Every non-NaN value of a 16-bit format, from -inf to +inf, by ``nextafter``: the
    i-th value is i steps from -inf (the walk passes -0.0 and never +0.0)."""
    t = NUMPY_TYPES[name]
    x, top = np.array([-np.inf], dtype=t), np.array([np.inf], dtype=t)
    out = [x[0]]
    while x[0] != top[0]:
        with np.errstate(over="ignore"):
            x = np.nextafter(x, top)
        out.append(x[0])
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_ordinal_and_ulps_exhaustively_against_a_nextafter_walk(name):
    walk = _walk(name)
    # Every bit pattern but the NaNs (all-ones exponent, nonzero mantissa) and +0.0.
    assert len(walk) == 2**16 - 2 * (2 ** (FORMATS[name].precision - 1) - 1) - 1
    zero = int(np.flatnonzero(walk == 0)[0])
    want = np.arange(len(walk), dtype=np.int64) - zero
    assert np.array_equal(ordinal(walk, name), want)
    rng = np.random.default_rng(11)
    i, j = rng.integers(0, len(walk), (2, 20000))
    got = ulps_between(walk[i], walk[j], name)
    assert got.dtype == "UInt64"
    assert np.array_equal(got.to_numpy(np.int64), np.abs(i - j))


def _steps(name: str, start: float, k: int, toward: float) -> tuple[float, int]:
    """``start`` moved ``k`` values toward ``toward`` by ``nextafter`` (stopping at
    ``toward``), and the number of steps taken; -0.0 and +0.0 count as one value."""
    t = NUMPY_TYPES[name]
    x, goal = t(start), t(toward)
    taken = 0
    while taken < k and x != goal:
        with np.errstate(over="ignore"):
            nxt = np.nextafter(x, goal)
        if not (x == 0 and nxt == 0):  # from -0.0 to +0.0 is no step
            taken += 1
        x = nxt
    return float(x), taken


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_ulps_against_nextafter_walks_at_random_and_at_the_edges(name):
    f = FORMATS[name]
    tiny, small, top = f.smallest_subnormal, f.smallest_normal, f.max_finite
    starts = [0.0, -0.0, tiny, -tiny, small, -small, small - tiny, top, -top, 1.0, -1.0]
    starts.append(float(NUMPY_TYPES[name](0.7)))
    rng = np.random.default_rng(5)
    mags = 10.0 ** rng.uniform(np.log10(tiny), np.log10(top), 300)
    starts += list(to_format(mags * rng.choice([-1, 1], mags.size), name))
    got, want = [], []
    for s in starts:
        for toward in (-np.inf, np.inf):
            k = int(rng.integers(1, 1500))
            end, taken = _steps(name, s, k, toward)
            got.append((s, end))
            want.append(taken)
    a, b = np.array(got).T
    assert np.array_equal(ulps_between(a, b, name).to_numpy(np.int64), want)
    assert np.array_equal(ulps_between(b, a, name).to_numpy(np.int64), want)


def test_ulps_are_exact_where_float64_ordinals_used_to_round():
    one_below = float(np.nextafter(1.0, 0.0))
    assert ulps_between([1.0], [one_below], "float64")[0] == 1
    two_up = float(np.nextafter(np.nextafter(0.7, 1.0), 1.0))
    assert ulps_between([0.7], [two_up], "float64")[0] == 2
    # A binade holds 2**(precision - 1) values; the subnormal range as many.
    for name in ("float32", "float64"):
        f = FORMATS[name]
        assert ulps_between([1.0], [2.0], name)[0] == 2 ** (f.precision - 1)
        assert ulps_between([0.0], [f.smallest_normal], name)[0] == 2 ** (f.precision - 1)
    # From -inf to +inf in float64: 2 * (2047 * 2**52) values apart, beyond int64.
    assert ulps_between([-np.inf], [np.inf], "float64")[0] == 2 * 2047 * 2**52


def test_ordinal_refuses_nan_and_values_the_format_cannot_hold():
    with pytest.raises(ValueError, match="NaN"):
        ordinal(np.array([np.nan]), "float32")
    with pytest.raises(ValueError, match="not a float32 value"):
        ordinal(np.array([0.1]), "float32")
    with pytest.raises(ValueError, match="not a bfloat16 value"):
        ordinal(np.array([1.0 + 2.0**-10]), "bfloat16")


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_rounding_keeps_the_sign_of_zero(name):
    # Zeros, and (below float64) values too small for the format, which round to zero.
    x = np.array([-0.0, 0.0] + ([-1e-300, 1e-300] if name != "float64" else []))
    got = to_format(x, name)
    assert not got.any()
    assert list(np.signbit(got)) == list(np.signbit(x))


def test_ordinal_is_consecutive_across_zero_subnormals_and_inf():
    f = FORMATS["bfloat16"]
    tiny, top = f.smallest_subnormal, f.max_finite
    x = np.array([-tiny, 0.0, tiny, 2 * tiny, f.smallest_normal - tiny, f.smallest_normal])
    assert list(np.diff(ordinal(x, "bfloat16"))) == [1, 1, 1, 125, 1]
    assert ulps_between(np.array([top]), np.array([np.inf]), "bfloat16")[0] == 1
    assert ulps_between(np.array([-0.0]), np.array([0.0]), "float32")[0] == 0
    assert ulps_between(np.array([np.nan]), np.array([1.0]), "float32").isna()[0]


def test_ulps_beyond_range_count_in_an_unbounded_exponent():
    # 1e300 = m 2**e; float32 keeps 24 bits: the distance from 3.4028235e38 (the largest
    # float32) is counted as if the binades went on, 2**23 values per binade.
    m, e = np.frexp(1e300)
    e = int(e)
    got = ulps_beyond_range(np.array([FORMATS["float32"].max_finite]), [m], [e], "float32")
    binades = e - 1 - 127  # from the largest float32's binade to 1e300's
    assert abs(int(got[0]) - binades * 2**23) < 2**23
    # Just beyond the largest float64 that rounds to +inf: 1 ulp past the largest finite.
    m, e = 0.5 * (2 - 2.0**-52) + 2.0**-54, 1024  # top + half an ulp and a quarter
    got = ulps_beyond_range(np.array([FORMATS["float64"].max_finite]), [m], [e], "float64")
    assert int(got[0]) == 1


def test_bits_of_error():
    assert list(bits_of_error(np.array([0, 1, 3, np.nan]), "float32")) == [0, 1, 2, 32]
    exact = ulps_between([1.0, 1.0], [1.0 + 2**-52 * 3, np.nan], "float64")
    assert list(bits_of_error(exact, "float64")) == [2, 64]


def test_is_subnormal():
    assert list(is_subnormal(np.array([0.0, 1e-45, 1.2e-38, 1e-30]), "float32")) == [
        False,
        True,
        False,
        False,
    ]
    assert is_subnormal(np.array([1e-310]), "float64")[0]


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_from_ordinal_inverts_ordinal_over_every_value(name):
    walk = _walk(name)
    back = from_ordinal(ordinal(walk, name), name)
    same = (back == walk) & ((np.signbit(back) == np.signbit(walk)) | (walk == 0))
    assert same.all()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_vectorised_rounding_matches_integer_rounding_at_ties(name):
    # Exact ties (a format value plus half its quantum), their float64 neighbours, the
    # overflow threshold and subnormal ties: the float64 arithmetic of _round_array
    # against round_mpf's integer arithmetic.
    from harness.numerics.floats import _round_array

    f = FORMATS[name]
    rng = np.random.default_rng(3)
    exps = rng.integers(f.emin - f.precision, f.emax + 1, 400)
    mants = rng.integers(1 << (f.precision - 1), 1 << f.precision, 400)
    values = np.ldexp(mants.astype(np.float64), exps - f.precision + 1)
    quantum = np.ldexp(1.0, np.maximum(exps, f.emin) - f.precision + 1)
    ties = values + quantum / 2
    threshold = f.max_finite + math.ldexp(1.0, f.emax - f.precision)
    x = np.concatenate([ties, np.nextafter(ties, 0), np.nextafter(ties, np.inf), [threshold]])
    x = np.concatenate([x, -x])
    want = np.array([round_mpf(mpmath.mpf(v), f) for v in x])
    assert np.array_equal(_round_array(x, f), want)


def test_a_reference_decimal_rounds_directly_at_the_overflow_and_underflow_edges():
    """float32's overflow threshold is (2**25 - 1) * 2**103, halfway between its largest
    finite and 2**128: a tie, rounded to even (inf); the integer one below it rounds to
    the largest finite. Half the smallest subnormal 2**-150 ties to 0."""
    from harness.numerics.floats import round_decimal

    edge = (2**25 - 1) * 2**103
    assert round_decimal(str(edge), "float32") == math.inf
    below = str(edge - 1)  # 39 exact digits
    assert round_decimal(below, "float32") == float(np.finfo(np.float32).max)
    half = mpmath.mpf(2) ** -150
    with mpmath.workdps(80):
        assert round_decimal(mpmath.nstr(half, 70), "float32") == 0.0
        assert round_decimal(mpmath.nstr(half * 1.0000001, 70), "float32") == 2.0**-149
    assert math.isnan(round_decimal("not a number", "float64"))
