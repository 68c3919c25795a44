"""The pytest plugin (entry point ``pytest11``): the ``check_derivatives`` fixture, which
is :func:`harness.assert_derivatives`, and the ``derivatives`` marker, which checks the
function a test returns. A failure is pytest's ``AssertionError`` with the table of
failing checks and their root causes; under ``pytest -n`` (xdist) every worker checks its
own tests, sharing the per-user reference cache (:func:`harness.stages.folders.user_cache`).
Loading the plugin imports no framework: the check does, when a test calls it.

    def test_log1pexp(check_derivatives):
        check_derivatives(log1pexp, "jax", inputs={"x": harness.sweep.log(1e-3, 1e3)})

    @pytest.mark.derivatives("torch", inputs={"x": [1.0, 100.0]}, orders=(1, 2))
    def test_softplus():
        return my_softplus
"""

from __future__ import annotations

import pytest

__all__ = ["check_derivatives", "pytest_configure", "pytest_pyfunc_call"]


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "derivatives(framework, **arguments): check the function the test returns with "
        "harness.assert_derivatives(fn, framework, **arguments)",
    )


@pytest.fixture
def check_derivatives():
    """:func:`harness.assert_derivatives`: raises ``DerivativeError`` (an
    ``AssertionError``) listing every failing check."""
    from harness.api.errors import assert_derivatives

    return assert_derivatives


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test marked ``derivatives`` returns the function to check; it is checked here
    (other tests: ``None``, pytest calls them)."""
    marker = pyfuncitem.get_closest_marker("derivatives")
    if marker is None:
        return None
    fn = pyfuncitem.obj
    arguments = {a: pyfuncitem.funcargs[a] for a in pyfuncitem._fixtureinfo.argnames}
    checked = fn(**arguments)
    if not callable(checked):
        raise TypeError(
            f"{pyfuncitem.name} is marked derivatives: it returns the function to check, "
            f"not {type(checked).__name__}"
        )
    from harness.api.errors import assert_derivatives

    assert_derivatives(checked, *marker.args, **marker.kwargs)
    return True
