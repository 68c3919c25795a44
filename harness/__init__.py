"""Differential testing of higher-order derivatives against an mpmath reference.

A user's own function is checked with :func:`check` (or :func:`assert_derivatives`), its
inputs swept over :mod:`harness.sweep`'s points; :func:`trace` gives its expression.
Each is imported when first used: ``import harness`` stays light (no framework)."""

__version__ = "0.1.0"

#: Public name -> (module, attribute); ``None``: the module itself.
_LAZY = {
    "trace": ("harness.api.trace", "trace"),
    "check": ("harness.api.check", "check"),
    "CheckResult": ("harness.api.check", "CheckResult"),
    "assert_derivatives": ("harness.api.errors", "assert_derivatives"),
    "DerivativeError": ("harness.api.errors", "DerivativeError"),
    "ReferenceUndecided": ("harness.api.errors", "ReferenceUndecided"),
    "TraceError": ("harness.backends.interface", "TraceError"),
    "sweep": ("harness.api.sweep", None),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    """The public names of :data:`_LAZY`, imported when first used."""
    if name not in _LAZY:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    import importlib

    module, attribute = _LAZY[name]
    found = importlib.import_module(module)
    return found if attribute is None else getattr(found, attribute)
