"""Provenance: what produced a result (versions, platform, device, commit, hashes, seeds).

Collected without importing TensorFlow: its version is taken from the installed
package metadata, and the evaluation stage adds what only a running TensorFlow knows
(devices, optimizer settings).
"""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "RUN_FACTS",
    "VECTOR_FLAGS",
    "collect",
    "cpu_features",
    "cpu_signature",
    "git_state",
    "host_cpu_signature",
    "now",
    "package_versions",
    "split_run_facts",
]

_PACKAGES = (
    "harness",
    "tensorflow-cpu",
    "tensorflow",
    "mpmath",
    "gmpy2",
    "numpy",
    "pandas",
    "pyarrow",
    "PyYAML",
    "jsonschema",
    "ml_dtypes",
    "snakemake",
)


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


@cache
def git_state(root: str | None = None) -> dict[str, Any]:
    """Commit and dirty flag of the checkout holding the package (or ``root``)."""
    where = Path(root) if root else Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
        return {"commit": commit, "dirty": bool(status.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}


@cache
def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


#: The CPU flags that choose a kernel's code path (vector width, fused multiply-add,
#: half-precision arithmetic): two machines with the same model name ("Intel(R) Xeon(R)
#: Processor" under a hypervisor) but other flags can round a kernel differently.
VECTOR_FLAGS = (
    "sse4_1",
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512_bf16",
    "avx512_fp16",
    "amx_bf16",
    "amx_tile",
    "asimd",
    "sve",
)


def _first_processor(cpuinfo: str) -> dict[str, str]:
    """The fields of the first processor's block of ``/proc/cpuinfo`` (the block is
    enough: every processor of a machine has the same model and flags); ``flags`` is
    x86's list, ``Features`` Arm's."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip() and fields:
            break
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    fields["flags"] = fields.get("flags") or fields.get("Features") or ""
    return fields


def cpu_features(cpuinfo: str) -> str:
    """The first processor's family, model and stepping and its :data:`VECTOR_FLAGS`, from
    the text of ``/proc/cpuinfo`` ("family 6, model 207, stepping 2; avx avx2 ...")."""
    fields = _first_processor(cpuinfo)
    flags = set(fields["flags"].split())
    ident = ", ".join(
        f"{name} {fields[key]}"
        for key, name in (("cpu family", "family"), ("model", "model"), ("stepping", "stepping"))
        if key in fields
    )
    return "; ".join(x for x in (ident, " ".join(f for f in VECTOR_FLAGS if f in flags)) if x)


@cache
def _cpu_features() -> str:
    try:
        return cpu_features(Path("/proc/cpuinfo").read_text())
    except OSError:
        return ""


def cpu_signature(cpuinfo: str) -> str:
    """The first processor's model name, family, model, stepping and *every* flag (sorted),
    from the text of ``/proc/cpuinfo``: what a compiler targeting the host may use, so
    code compiled on one machine is reused only where all of it is the same
    (:mod:`harness.backends.jax.cache`)."""
    fields = _first_processor(cpuinfo)
    flags = " ".join(sorted(set(fields["flags"].split())))
    ident = "; ".join(
        f"{key} {fields[key]}"
        for key in ("model name", "cpu family", "model", "stepping")
        if key in fields
    )
    return f"{ident}; flags {flags}" if ident or flags else ""


@cache
def host_cpu_signature() -> str:
    """:func:`cpu_signature` of this machine (the platform's name where ``/proc`` does not
    say)."""
    try:
        return cpu_signature(Path("/proc/cpuinfo").read_text()) or _cpu()
    except OSError:
        return f"{platform.machine()} {platform.processor()}"


#: What differs from one run of a stage to the next with nothing else changed: when it
#: ran, how long it took, what the reference cache already held, the evaluation's
#: statistics (seconds among them). They go to the stage's timings table, never into a
#: result table's provenance, so two runs write byte-identical result tables.
RUN_FACTS = ("created", "seconds", "reference_counts", "evaluation")


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def split_run_facts(meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``meta`` without its :data:`RUN_FACTS`, and those facts (with ``created``)."""
    kept = {k: v for k, v in meta.items() if k not in RUN_FACTS}
    facts = {"created": now(), **{k: meta[k] for k in RUN_FACTS if k in meta}}
    return kept, facts


def collect(**extra: Any) -> dict[str, Any]:
    """The provenance record, with ``extra`` (case and config hashes, seeds, ...) on top.
    Nothing in it depends on when or how fast the stage ran (see :data:`RUN_FACTS`)."""
    import mpmath

    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": _cpu(),
        "cpu_features": _cpu_features(),
        "packages": package_versions(),
        "mpmath_backend": mpmath.libmp.BACKEND,
        "git": git_state(),
        **extra,
    }
