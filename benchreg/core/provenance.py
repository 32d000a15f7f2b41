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

from benchreg.core.io import EncodedJSON, sha256_file, sha256_text
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
# A key whose value is a secret: `api_key`, `x-api-key`, `private_key`, `access_key`,
# `session_key`, `auth`, `auth_token`, `hf_token`, `password`, `client_secret`, `credentials`,
# `cookie`, ... but not `max_tokens`, `tokenizer`, `author` or `api_key_env` (that one holds the
# NAME of a variable).
SECRET_KEY = re.compile(
    r"(api[_-]?key|secret|passw(or)?d|passphrase|authori[sz]ation|credential|private[_-]?key"
    r"|access[_-]?key|session[_-]?key|signing[_-]?key|cookie"
    r"|(^|[_\-.])(auth|token|bearer|pwd|jwt)([_\-.]|$))",
    re.I,
)
NAME_ONLY_KEY = re.compile(r"[_\-.]env$", re.I)  # `api_key_env`: the name of a variable
# Values that are secrets whatever their key: credentials in a URL, API keys and bearer tokens.
SECRET_VALUES = (
    re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@]+@"),  # scheme://user:pass@host
    re.compile(
        r"(?i)([?&](?:api[_-]?key|access[_-]?token|token|key|secret|password|sig)=)[^&\s#]+"
    ),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{16,}"),  # OpenAI/Anthropic-style keys
    re.compile(r"\b(?:gh[pousr]|github_pat|hf|glpat|xox[abprs])[_\-][A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWT
)
REDACTED = "***redacted***"
MIN_SECRET_LENGTH = 6  # shorter values would redact ordinary words
_secret_values: set[str] = set()


def register_secret(value: str | None) -> None:
    """A secret benchreg read (an API key from the environment): from now on every output is
    redacted by this value too, wherever it appears (a server may echo it)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        _secret_values.add(value)


def scrub(value: Any) -> Any:
    """``value`` with every registered secret value replaced, at any depth (strings only; the
    same object back when no secret is registered)."""
    if not _secret_values:
        return value
    if isinstance(value, str):
        return _without_secret_values(value)
    if isinstance(value, Mapping):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    if isinstance(value, EncodedJSON):  # JSON text encoded already: scrubbed as its value
        return scrub(value.value())
    return value


def _without_secret_values(text: str) -> str:
    for secret in sorted(_secret_values, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def is_secret_key(key: object) -> bool:
    text = str(key)
    return bool(SECRET_KEY.search(text)) and not NAME_ONLY_KEY.search(text)


def looks_secret(text: str) -> bool:
    """True when ``text`` holds a secret by its form (URL credentials, key or token)."""
    return any(pattern.search(text) for pattern in SECRET_VALUES)


def redact_text(text: str) -> str:
    """``text`` with every registered secret value and every secret-looking part replaced (URL
    credentials keep scheme and host)."""
    if _secret_values:
        text = _without_secret_values(text)
    for pattern in SECRET_VALUES:
        text = pattern.sub(_replacement, text)
    return text


def _replacement(match: re.Match[str]) -> str:
    groups = [g for g in match.groups() if g]
    if not groups:
        return REDACTED
    return f"{groups[0]}{REDACTED}{'@' if match.group(0).endswith('@') else ''}"


def redact(value: Any) -> Any:
    """Replace the value of every key that looks like a secret, at any depth, and every string
    value that looks like a secret (by its form), wherever it is."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if is_secret_key(k) and v not in (None, "") else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_override(override: str) -> str:
    """`model.api_key=sk-...` -> `model.api_key=***redacted***` (command-line overrides)."""
    key, sep, value = override.partition("=")
    last = key.lstrip("+~").rsplit(".", 1)[-1]
    if sep and value and is_secret_key(last):
        return f"{key}={REDACTED}"
    return redact_text(override)


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
    from benchreg.core.registry import all_families

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
    from benchreg.core.version import __version__

    return {
        "benchreg": __version__,
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
    }
