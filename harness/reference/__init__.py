"""The arbitrary-precision reference: Taylor jets in mpmath (:mod:`.jets`),
verification at two precisions (:mod:`.verify`), and the reference table rounded to each
dtype (:mod:`.table`)."""
