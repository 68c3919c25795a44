"""``python -m harness``: the same commands as the ``harness`` console script."""

from harness.cli import main

raise SystemExit(main())
