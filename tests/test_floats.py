"""Rounding to each format, ordinals, ulps and bits (no TensorFlow)."""

from __future__ import annotations

import math

import ml_dtypes
import mpmath
import numpy as np
import pytest

from harness.floats import (
    FORMATS,
    bits_of_error,
    is_subnormal,
    ordinal,
    round_mpf,
    to_format,
    ulps_between,
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


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_ordinal_matches_bit_patterns(name):
    np_type = {
        "float16": (np.float16, np.int16),
        "float32": (np.float32, np.int32),
        "float64": (np.float64, np.int64),
    }[name]
    x = to_format(_samples(), name)
    x = x[np.isfinite(x) | np.isinf(x)]
    bits = x.astype(np_type[0]).view(np_type[1]).astype(np.int64)
    mag = np.where(bits < 0, bits & np.iinfo(np_type[1]).max, bits)
    want = np.where(np.signbit(x), -mag, mag).astype(np.float64)
    assert np.array_equal(ordinal(x, name), want)


def test_ordinal_is_consecutive_across_zero_subnormals_and_inf():
    f = FORMATS["bfloat16"]
    tiny, top = f.smallest_subnormal, f.max_finite
    x = np.array([-tiny, 0.0, tiny, 2 * tiny, f.smallest_normal - tiny, f.smallest_normal])
    assert list(np.diff(ordinal(x, "bfloat16"))) == [1, 1, 1, 125, 1]
    assert ulps_between(np.array([top]), np.array([np.inf]), "bfloat16")[0] == 1
    assert ulps_between(np.array([-0.0]), np.array([0.0]), "float32")[0] == 0
    assert np.isnan(ulps_between(np.array([np.nan]), np.array([1.0]), "float32")[0])


def test_bits_of_error():
    assert list(bits_of_error(np.array([0, 1, 3, np.nan]), "float32")) == [0, 1, 2, 32]


def test_is_subnormal():
    assert list(is_subnormal(np.array([0.0, 1e-45, 1.2e-38, 1e-30]), "float32")) == [
        False,
        True,
        False,
        False,
    ]
    assert is_subnormal(np.array([1e-310]), "float64")[0]
