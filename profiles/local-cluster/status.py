"""Print a submitted job's state for snakemake-executor-plugin-cluster-generic:
``success``, ``failed`` or ``running`` (see submit.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def state(job: str) -> str:
    folder = Path("logs") / "cluster" / job
    exit_file = folder / "exit"
    if exit_file.exists():
        return "success" if exit_file.read_text().strip() == "0" else "failed"
    try:
        os.kill(int((folder / "pid").read_text()), 0)
    except (OSError, ValueError):
        # Gone without an exit status (killed): unless it wrote one meanwhile, failed.
        return (
            ("success" if exit_file.read_text().strip() == "0" else "failed")
            if exit_file.exists()
            else "failed"
        )
    return "running"


if __name__ == "__main__":
    print(state(sys.argv[-1]))
