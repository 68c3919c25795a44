"""The process the reproduce stage runs its scripts in, and its client.

``harness repro`` runs every reproducer of a framework in one process (the framework
imported once, its traces shared as a user's session would share them), but not in its
own: a script that kills its process (PyTorch's ``torch.compile`` of a third-order
``jvp`` of ``softplus`` in float16 is a segmentation fault) would take the stage and
every reproducer already run with it. :class:`ScriptWorker` starts this module as a
child process, sends it one script per line (JSON on its stdin) and reads one answer per
line; a script whose process dies is that script's result, and the next script gets a
new process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

from harness.backends.crashes import signal_name

__all__ = ["ScriptFailed", "ScriptWorker", "run_script"]


class ScriptFailed(RuntimeError):
    """The script raised (the message: ``Type: first line``) or killed its process."""


def run_script(text: str, label: str) -> str:
    """Execute a reproducer's text in this process; the ``got`` line it prints."""
    lines: list[str] = []

    def capture(*args, **kw):
        lines.append(" ".join(str(a) for a in args))

    # A module of its own, registered as one: torch.compile imports the module that
    # defines the function it compiles (a bare namespace raised ModuleNotFoundError).
    module = types.ModuleType("__reproducer__")
    module.print = capture
    sys.modules[module.__name__] = module
    exec(compile(text, f"<reproducer {label}>", "exec"), module.__dict__)  # noqa: S102
    return next((x for x in lines if x.startswith("got")), "got   None")


class ScriptWorker:
    """Runs scripts one after another in a child process of this module (started on the
    first script, and again after one that killed it)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None

    def run(self, text: str, label: str) -> str:
        """The script's ``got`` line; :class:`ScriptFailed` where it raised or died."""
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "harness.causes.script_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        try:
            self.proc.stdin.write(json.dumps({"text": text, "label": label}) + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            code = self.proc.wait()
            self.proc = None
            how = f"exit {code}" if code >= 0 else f"signal {-code} ({signal_name(-code)})"
            raise ScriptFailed(f"the script's process died: {how}")
        answer = json.loads(answer)
        if "error" in answer:
            raise ScriptFailed(answer["error"])
        return answer["line"]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def _serve() -> None:
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what a framework prints goes to stderr, not into the answers
    sys.stdout = sys.stderr
    for request in sys.stdin:
        asked = json.loads(request)
        try:
            answer = {"line": run_script(asked["text"], asked["label"])}
        except Exception as exc:  # noqa: BLE001 - the script's own failure is its result
            first = str(exc).splitlines()[0] if str(exc) else ""
            answer = {"error": f"{type(exc).__name__}: {first}"[:300]}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    _serve()
