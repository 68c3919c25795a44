"""A user's own function, checked as it is written (issue 58): traced into the harness's
expression (:mod:`harness.api.trace`), each framework's tracer behind its back end."""
