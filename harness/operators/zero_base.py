"""A real power ``a ** y`` at a zero base, for both reference engines (mpmath jets and Arb
ball jets): ``a`` exactly 0, the exponent's value ``y0`` positive.

Near ``(0+, y0)`` the coefficient of ``a^i (y - y0)^j`` of ``a^y`` is the limit from above
(the base of a real power cannot go below 0, so every derivative in it is one-sided):

- ``i < y0``: 0 (``a^(y0 - i)`` times powers of ``log a`` vanishes);
- ``i == y0`` (an integer exponent): 1 for ``j = 0`` (``a^i / i!`` times ``i!``), none for
  ``j >= 1`` (``log a`` is unbounded);
- ``i > y0``: 0 for ``j = 0`` if ``y0`` is an integer (a polynomial in ``a``), else none.

So ``0 ** y`` (a constant base) has the value 0 and every derivative in ``y`` 0; ``a ** y``
at ``a = 0``, ``y = 1`` has ``∂a = 1``; ``x ** 2.5`` at 0 has f, f', f'' = 0 and no f'''.
Where no derivative exists the coefficient is NaN, on exactly the output coefficients its
monomial reaches (an exactly zero one stays zero). ``y0 <= 0`` has no value (``0 ** 0`` as
a function of ``y``, or 0 to a negative power): the caller says so.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["power_at_zero_base"]


def power_at_zero_base(left, right, compare: Callable[[int], int], integer: bool, *,
                       zero, one, nan, is_zero: Callable) -> object:  # fmt: skip
    """The jet of ``left ** right`` where ``left``'s value is exactly 0. ``compare(i)`` is
    the sign of ``i - y0``; ``integer`` whether ``y0`` is one; ``zero``, ``one``, ``nan``
    and ``is_zero`` are the engine's numbers (mpf or arb)."""
    make = type(left)
    space = left.space
    total = space.total
    da = make(space, [zero] + list(left.c[1:]))
    dy = make(space, [zero] + list(right.c[1:]))
    unit = make(space, [one] + [zero] * (space.size - 1))
    a_powers, y_powers = [unit], [unit]
    for _ in range(total):
        a_powers.append(a_powers[-1] * da)
        y_powers.append(y_powers[-1] * dy)
    out = [zero] * space.size
    missing = [False] * space.size
    for i in range(total + 1):
        side = compare(i)
        for j in range(total + 1 - i):
            if side < 0 or (side > 0 and j == 0 and integer):
                continue  # a coefficient exactly 0
            term = (a_powers[i] * y_powers[j]).c
            if side == 0 and j == 0:
                out = [o + t for o, t in zip(out, term)]
            else:  # no derivative: NaN wherever this monomial reaches
                missing = [m or not is_zero(t) for m, t in zip(missing, term)]
    return make(space, [nan if m else o for o, m in zip(out, missing)])
