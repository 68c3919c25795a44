"""JAX's persistent compilation cache, kept beside a study's results.

JAX compiles every primitive it runs eagerly (per primitive, shapes, dtypes and
parameters) and every jitted function, and keeps the programs only for the life of the
process. The study and the census evaluate in many JAX processes (a job per case, or per
batch of census kernels), each compiling the same primitives again. With the cache on,
a process stores what it compiled under ``<results>/.cache/compiled/jax/<key>/`` and
the next one loads it instead of compiling. In the quick census the second batch's JAX
job ran 13 to 21% faster with the first batch's programs there, and a rerun's JAX jobs in
34 to 45% of the time, with equal evaluations (benchmarks/README.md).

A cached program is the very executable XLA compiled, so values do not change; but an
executable compiled for one processor may use instructions or code paths another lacks,
and JAX's own key does not name the host's CPU features. The folder's ``key`` does: a
SHA-256 of JAX's and jaxlib's versions, the XLA flags, the platform, 64-bit mode and
:func:`harness.provenance.host_cpu_signature` (model, family, stepping and every CPU
flag), so a copied results folder is never served on another kind of machine. A cache is
trusted code (JAX's documentation says so): it lives in the user's own results folder.

Entries are written without a lock (JAX's default, unbounded size; its bounded mode
rescans the whole folder on every write): a process that reads an entry another is still
writing gets an unreadable one, warns and compiles instead. The study's
``compilation_cache: false`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["cache_folder", "key_facts", "use_cache"]


def key_facts() -> dict[str, str]:
    """What a cached program depends on beyond what JAX keys it by."""
    import jax
    import jaxlib

    from harness.provenance import host_cpu_signature

    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "platforms": os.environ.get("JAX_PLATFORMS", ""),
        "x64": str(bool(jax.config.jax_enable_x64)),
        "cpu": host_cpu_signature(),
    }


def cache_folder(root: str | Path, facts: Mapping[str, str]) -> Path:
    """``root/jax/<the first 16 hex digits of the SHA-256 of facts, as sorted JSON>``."""
    text = json.dumps(dict(facts), sort_keys=True, separators=(",", ":"))
    return Path(root) / "jax" / hashlib.sha256(text.encode()).hexdigest()[:16]


def use_cache(root: str | Path) -> Path:
    """Turn JAX's persistent compilation cache on in the folder for this machine under
    ``root``, every program cached however fast it compiled; before the first compilation
    (JAX reads the setting once). Returns the folder."""
    import jax

    folder = cache_folder(root, key_facts())
    folder.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return folder
