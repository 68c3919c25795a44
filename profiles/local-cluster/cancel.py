"""Cancel submitted jobs (their whole process group): called with their job ids."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

for job in sys.argv[1:]:
    try:
        pid = int((Path("logs") / "cluster" / job / "pid").read_text())
        os.killpg(pid, signal.SIGTERM)
    except (OSError, ValueError):
        pass
