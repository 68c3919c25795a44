"""Submit one Snakemake job script as a detached process: prints its job id.

Called by snakemake-executor-plugin-cluster-generic with the job script as the last
argument. The job's folder, logs/cluster/<jobid>/, holds what a scheduler would keep:
the resources the job asked for (from the script's ``# properties`` line), its output,
its process id and, when it ends, its exit status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path


def main() -> int:
    script = Path(sys.argv[-1]).resolve()
    job = f"local-{uuid.uuid4().hex[:12]}"
    folder = Path("logs") / "cluster" / job
    folder.mkdir(parents=True)
    properties = {}
    for line in script.read_text().splitlines():
        if line.startswith("# properties = "):
            properties = json.loads(line.split("=", 1)[1])
    requested = {
        "rule": properties.get("rule"),
        "wildcards": properties.get("wildcards"),
        "threads": properties.get("threads"),
        "resources": properties.get("resources"),
    }
    (folder / "requested.json").write_text(json.dumps(requested, indent=1, sort_keys=True))
    # The exit status is written last, atomically: status.py reads it or sees none.
    runner = (
        'bash "$0" > "$1/output.log" 2>&1; code=$?; '
        'echo $code > "$1/exit.tmp" && mv "$1/exit.tmp" "$1/exit"'
    )
    proc = subprocess.Popen(
        ["bash", "-c", runner, str(script), str(folder)],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    (folder / "pid").write_text(str(proc.pid))
    print(job)
    return 0


if __name__ == "__main__":
    sys.exit(main())
