"""The kernel census: every operator of the table, in every framework's own kernel, over
its whole domain in every dtype, as generated case files (:mod:`.cases`) whose points
(:mod:`.points`) come from the table's sampling, not from a hand-written case."""
