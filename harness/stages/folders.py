"""Where a run outside the study keeps its tables: a folder of the caller's or a
temporary one, and the per-user cache (the certified references and JAX's compiled
programs) that every such run shares (``harness.check``, ``harness repair``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["run_folder", "share_cache", "user_cache"]


def user_cache() -> Path:
    """The per-user cache folder: ``$HARNESS_CACHE``, else ``$XDG_CACHE_HOME/harness``,
    else ``~/.cache/harness``."""
    if os.environ.get("HARNESS_CACHE"):
        return Path(os.environ["HARNESS_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "harness"


def run_folder(results, prefix: str = "harness-check-"):
    """The run's folder and what keeps it (a temporary folder lives as long as its result)."""
    if results is not None:
        Path(results).mkdir(parents=True, exist_ok=True)
        return Path(results), None
    keep = tempfile.TemporaryDirectory(prefix=prefix)
    return Path(keep.name), keep


def share_cache(results: Path) -> None:
    """``results/.cache`` is the per-user cache (the reference and compiled programs
    kept between checks), where the user's cache folder can be made; else its own."""
    own = results / ".cache"
    if own.exists() or own.is_symlink():
        return
    try:
        shared = user_cache()
        shared.mkdir(parents=True, exist_ok=True)
        own.symlink_to(shared.resolve(), target_is_directory=True)
    except OSError:  # no home to cache in, or no symbolic links here: this run's own
        own.mkdir(exist_ok=True)
