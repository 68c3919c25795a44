"""Exact edges of each outcome band: brackets between judged points
(:mod:`.brackets`), bisection on the float lattice (:mod:`.bisection`), and the finder that
drives it for a case (:mod:`.finder`)."""
