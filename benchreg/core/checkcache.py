"""Validation results cached by the sha256 of the data files they checked.

A loader that runs an expensive check over a data file (RDKit parsing every SMILES, ...) asks
:func:`validated` first; when the same check with the same params already passed on files with the
same sha256 under the same benchreg version, it may skip the check (and says so in its log and
``Dataset.info``). Only a check that passed is recorded (:func:`mark_validated`); a failing file is
checked again on every run, so its error is always reported.

Entries live outside any run folder, in the benchreg cache dir: ``$BENCHREG_CACHE_DIR``, else
``$XDG_CACHE_HOME/benchreg``, else ``~/.cache/benchreg``; one small JSON file per entry under
``validated/``, written to a temp file and renamed (safe when parallel processes record the same
entry). ``BENCHREG_VALIDATION_CACHE=off`` turns the cache off (every check runs). A cache that
cannot be written (read-only home) is skipped silently: caching is an optimisation only.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchreg.core.io import atomic_write_text, sha256_file, sha256_text


def cache_dir() -> Path:
    explicit = os.environ.get("BENCHREG_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "benchreg"


def enabled() -> bool:
    setting = os.environ.get("BENCHREG_VALIDATION_CACHE", "").lower()
    return setting not in ("0", "off", "false", "no")


def _entry(check: str, files: Sequence[Path], params: Mapping[str, Any]) -> tuple[Path, dict]:
    from benchreg import __version__

    record = {
        "check": check,
        "benchreg": __version__,
        "params": dict(params),
        "files": [{"name": Path(f).name, "sha256": sha256_file(Path(f))} for f in files],
    }
    key = sha256_text(json.dumps(record, sort_keys=True, default=str))
    return cache_dir() / "validated" / key[:2] / f"{key}.json", record


def validated(check: str, files: Sequence[Path], params: Mapping[str, Any] | None = None) -> bool:
    """True when ``check`` with ``params`` already passed on these files' exact contents."""
    if not enabled():
        return False
    path, _ = _entry(check, files, params or {})
    return path.is_file()


def mark_validated(
    check: str, files: Sequence[Path], params: Mapping[str, Any] | None = None
) -> None:
    """Record that ``check`` passed on these files (best effort)."""
    if not enabled():
        return
    path, record = _entry(check, files, params or {})
    with contextlib.suppress(OSError):
        atomic_write_text(path, json.dumps(record, sort_keys=True) + "\n")
