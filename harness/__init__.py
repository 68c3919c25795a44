"""Differential testing of higher-order derivatives against an mpmath reference."""

__version__ = "0.1.0"
