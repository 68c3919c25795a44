"""Floating-point facts the other stages share: the formats and exact rounding
(:mod:`.floats`), the subnormal flush of this CPU (:mod:`.flush`), finite-difference
stencils (:mod:`.stencils`) and their error model (:mod:`.fd_model`). Imports nothing else
of the package."""
