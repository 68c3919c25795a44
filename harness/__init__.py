"""Differential testing of higher-order derivatives against an mpmath reference."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """``harness.trace``: imported when first used (``import harness`` stays light)."""
    if name == "trace":
        from harness.api.trace import trace

        return trace
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
