"""The stages, one module each: a case prepared for them (:mod:`.prepared`, split into
pieces: :mod:`.pieces`), its reference (:mod:`.reference`), its evaluation per back end
and piece (:mod:`.evaluate`), its comparison (:mod:`.compare`), all three in one process
(:mod:`.run`), the report (:mod:`.report`); :mod:`.inputs` reads one stage's tables as the
next one's input. Each stage's job depends on the package files its module reaches
(:func:`harness.workflow.sources.stage_sources`)."""
