"""``python -m harness``: the same commands as the ``harness`` console script."""

from .cli import main

raise SystemExit(main())
