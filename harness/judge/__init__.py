"""Judging values against the reference: rows (:mod:`.compare`), runs of points
(:mod:`.runs`), per-combination summaries (:mod:`.summary`), findings
(:mod:`.findings`, :mod:`.findings_text`) and the study-wide tables (:mod:`.collect`)."""
