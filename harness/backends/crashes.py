"""A framework that kills the evaluating process, and the combination it was computing.

Some kernels crash their framework's process rather than raise: PyTorch 2.13's
``torch.compile`` of three nested ``jvp`` of ``elu`` is a segmentation fault, in every
dtype, which ended a job of the full census and every case in it. ``harness evaluate``,
``harness run`` and ``harness repair`` (:data:`SUPERVISED`) therefore do their work in a
child process (:func:`supervise`). Before each framework call the child names what it computes
(:func:`begin`, :func:`naming`: case, back end, dtype, method, mode and phase) in a small
file; when the child dies by a signal, the parent records that combination as crashed
and starts a new child. The new child computes everything else and writes the crashed
combination's rows as ``error`` rows saying how the process died (:func:`crashed`). A
crash while finding a combination's exact edges (the bisection's calls at new inputs,
phase :data:`EDGES`) keeps its rows, computed again, and leaves its edges at the sweep's
points (:func:`bisected`); a crash while localising skips that case's localisation.
Nothing a case finished is lost: each case's tables are written, atomically, as it
finishes, and are computed again the same. A stop signal sent to the command (a
scheduler's cancel) goes on to the child; the command then exits as stopped, its
folder removed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

__all__ = [
    "ENV",
    "EDGES",
    "LOCALISE",
    "ProcessDied",
    "SUPERVISED",
    "begin",
    "bisected",
    "crashed",
    "naming",
    "signal_name",
    "supervise",
]

#: The commands that evaluate in a framework, each in a child process.
SUPERVISED = ("evaluate", "run", "repair")

#: The folder where the child names what it computes and reads what crashed before.
ENV = "HARNESS_CRASH_LEDGER"
_CURRENT = "current.json"
_CRASHED = "crashed.json"

#: The method and mode :func:`begin` names while a case's failing rows are localised
#: (its dtype: the piece's name).
LOCALISE = ("localise", "")
#: The phase :func:`naming` names: a bisection's calls at new inputs (the sweep's is "").
EDGES = "edges"

#: A crash of the same combination twice, or more crashes than this, ends the command.
MAX_CRASHES = 20


class ProcessDied(RuntimeError):
    """The rows of a combination that killed an earlier process (its message: how)."""


#: Signals that stop the command (an interrupt, a scheduler's cancel), not a crash.
_STOPPED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}


def _folder() -> Path | None:
    where = os.environ.get(ENV)
    return Path(where) if where else None


def begin(
    case: str | None,
    backend: str = "",
    dtype: str = "",
    method: str = "",
    mode: str = "",
    phase: str = "",
) -> None:
    """Name the combination the next framework calls compute (``case`` None: none;
    ``phase``: "" the sweep, :data:`EDGES` its bisection; localising is the method
    ``localise``, :data:`LOCALISE`)."""
    folder = _folder()
    if folder is None:
        return
    path = folder / _CURRENT
    if case is None:
        path.unlink(missing_ok=True)
        return
    record = {
        "case": case,
        "backend": backend,
        "dtype": dtype,
        "method": method,
        "mode": mode,
        "phase": phase,
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)


def crashed(
    case: str, backend: str, dtype: str, method: str, mode: str, phase: str = ""
) -> str | None:
    """How the process died computing this combination, in this phase, in an earlier
    child (None: it did not)."""
    folder = _folder()
    if folder is None or not (folder / _CRASHED).exists():
        return None
    key = {"case": case, "backend": backend, "dtype": dtype, "method": method, "mode": mode}
    for record in json.loads((folder / _CRASHED).read_text()):
        if all(record[k] == v for k, v in key.items()) and record.get("phase", "") == phase:
            return record["message"]
    return None


def bisected(case: str, backend: str, dtype: str, method: str, modes) -> list[str]:
    """The ``modes`` whose edges are found: those whose bisection killed no earlier
    process (the others' edges stay at the sweep's points)."""
    return [m for m in modes if crashed(case, backend, dtype, method, m, EDGES) is None]


def naming(case: str, backend: str, dtype: str, method: str, evaluate):
    """``evaluate(mode, inputs)`` (a bisection's calls at new inputs), naming its
    combination, in the phase :data:`EDGES`, with :func:`begin` before each call."""

    def call(mode, inputs):
        begin(case, backend, dtype, method, mode, EDGES)
        return evaluate(mode, inputs)

    return call


def signal_name(number: int) -> str:
    """The signal's name (``SIGSEGV``), or ``unnamed`` for a real-time signal."""
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name of its own
        return "unnamed"


#: Signals passed on to the child: a scheduler's cancel or a closed terminal stops the
#: parent alone (an interrupt from the terminal reaches both).
_FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _child(argv: list[str], env: dict) -> int:
    """Run ``harness <argv>`` in a child process; its return code. A stop signal sent to
    this process goes on to the child, which stops; this process then returns as a
    stopped one, removing its folder (killed by the signal itself, it would leave the
    child running and the folder behind)."""
    child = subprocess.Popen([sys.executable, "-m", "harness", *argv], env=env)
    if threading.current_thread() is not threading.main_thread():
        return child.wait()  # only the main thread may take signals

    def forward(number, _frame):
        child.send_signal(number)

    previous = {number: signal.signal(number, forward) for number in _FORWARDED}
    try:
        return child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def supervise(argv: list[str]) -> int:
    """Run ``harness <argv>`` in a child process until it exits, again after each crash
    inside a framework call (see the module's docstring); its exit status."""
    command = f"harness {argv[0]}" if argv else "harness"
    with tempfile.TemporaryDirectory(prefix="harness-crashes-") as where:
        env = {**os.environ, ENV: where}
        records: list[dict] = []
        while True:
            code = _child(argv, env)
            number = -code
            if code >= 0 or number in _STOPPED:
                return code if code >= 0 else 128 + number
            how = f"signal {number} ({signal_name(number)})"
            current = Path(where) / _CURRENT
            if not current.exists():
                print(
                    f"{command}: the process died ({how}) outside any framework call",
                    file=sys.stderr,
                )
                return 128 + number
            record = json.loads(current.read_text())
            current.unlink()
            if any({**r, "message": ""} == {**record, "message": ""} for r in records):
                print(f"{command}: the process died ({how}) again at {record}", file=sys.stderr)
                return 128 + number
            edges = record.get("phase") == EDGES
            what = (
                f"localising in {record['backend']}"
                if record["method"] == "localise"
                else f"{record['backend']} {record['method']}, {record['mode']} mode"
                + (", finding its edges" if edges else "")
            )
            record["message"] = f"{how} killed the process: {what}, {record['dtype']}"
            records.append(record)
            (Path(where) / _CRASHED).write_text(json.dumps(records))
            kept = "its edges stay at the sweep's points" if edges else "its rows are errors"
            print(
                f"{command}: {record['case']}: {record['message']}; {kept}, and a "
                "new process computes the rest",
                file=sys.stderr,
                flush=True,
            )
            if len(records) > MAX_CRASHES:
                return 128 + number
