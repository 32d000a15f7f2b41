"""What a run was made of: hashes of every input, versions, and the (redacted) config."""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from benchreg.core.io import sha256_file, sha256_text
from benchreg.core.spec import TaskSpec

CORE_PACKAGES = (
    "benchreg",
    "hydra-core",
    "omegaconf",
    "pydantic",
    "pyyaml",
    "loguru",
    "numpy",
    "scipy",
)
SECRET_KEY = re.compile(
    r"(api[_-]?key|token|secret|password|passwd|authorization|credential)", re.I
)
REDACTED = "***redacted***"


def redact(value: Any) -> Any:
    """Replace the value of every key that looks like a secret, at any depth."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if SECRET_KEY.search(str(k)) and v not in (None, "") else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def redact_override(override: str) -> str:
    """`model.api_key=sk-...` -> `model.api_key=***redacted***` (command-line overrides)."""
    key, sep, value = override.partition("=")
    return f"{key}={REDACTED}" if sep and value and SECRET_KEY.search(key) else override


def spec_sha256(spec: TaskSpec) -> str:
    return sha256_text(json.dumps(spec.model_dump(mode="json"), sort_keys=True))


def file_hashes(paths: Iterable[Path], root: Path | None = None) -> dict[str, str]:
    out = {}
    for path in sorted(set(paths)):
        key = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
        out[key] = sha256_file(path)
    return out


@cache
def package_versions() -> dict[str, str | None]:
    """Versions of the core's packages and of every package a registered family names."""
    from benchreg.core.family import all_families

    names = list(CORE_PACKAGES)
    for family in all_families():
        names += [p for p in family.packages if p not in names]
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


@cache
def git_commit() -> str | None:
    source = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    if out.returncode != 0 or not commit:
        return None
    dirty = subprocess.run(
        ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        timeout=5,
        check=False,
    ).stdout.strip()
    return f"{commit}{'-dirty' if dirty else ''}"


def environment() -> dict[str, Any]:
    from benchreg import __version__

    return {
        "benchreg": __version__,
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
    }
