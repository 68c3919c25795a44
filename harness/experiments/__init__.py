"""Experiments: cases whose quantities are not partials of one expression. The
registry (:mod:`.base`), the experiments (:mod:`.hessian_norm`, :mod:`.matrix_partials`),
the lookup (:mod:`.catalogue`), their three stages (:mod:`.stages`) and their page
(:mod:`.page`)."""
