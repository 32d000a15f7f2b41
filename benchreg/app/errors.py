"""Hydra's and OmegaConf's own errors, and command-line secrets, as one benchreg line.

Hydra reports an unknown config group or option, an unknown key or a malformed override as a
multi-line message (sometimes with a traceback) and exit code 1; the app catches them and says the
same in one line with the nearest known names, exit code 2.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.core.provenance import REDACTED, is_secret_key, looks_secret, redact_text
from benchreg.core.resources import conf_dir

ENV_INTERPOLATION = re.compile(r"\$\{\s*oc\.env\s*:\s*([^,}\s]+)")


def reject_secret_overrides(argv: list[str]) -> None:
    """A secret on the command line would be echoed, stored in `.hydra/`, `multirun.yaml` and
    folder names: stop before Hydra sees it (the systems read keys from the environment)."""
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, _, value = arg.partition("=")
        name = key.lstrip("+~").rsplit(".", 1)[-1]
        env_vars = ENV_INTERPOLATION.findall(value)
        secret = (
            (is_secret_key(name) and value.strip() not in ("", "null"))
            or looks_secret(value)
            or any(is_secret_key(var) for var in env_vars)
        )
        if secret:
            raise BenchregError(
                f"override {key}={REDACTED}: a secret on the command line would be echoed and "
                "stored in the run's outputs",
                fix="keep it in an environment variable and name the variable, e.g. "
                "model.api_key_env=OPENAI_API_KEY",
            )
        if name == "api_key_env":
            _check_variable_names(key, value)


def _check_variable_names(key: str, value: str) -> None:
    """`model.api_key_env` holds the NAME of a variable: a key typed there (or anything that is
    not a variable name) is refused before Hydra writes it to multirun.yaml, folder names and
    the summary, and without repeating it. A sweep (`A,B`, `choice(A,B)`) is checked per name."""
    from benchreg.systems.chat_config import (
        KEY_FIX,
        api_key_env_problem,
        shown_variable,
        unset_variable_message,
    )

    text = value.strip()
    if text in ("", "null", "None"):
        return
    for wrapper in ("choice(", "["):
        if text.startswith(wrapper) and text.endswith(")" if wrapper == "choice(" else "]"):
            text = text[len(wrapper) : -1]
    for part in text.split(","):
        name = part.strip().strip("'\"")
        problem = api_key_env_problem(name) if name not in ("null", "None") else None
        if problem is not None:
            raise BenchregError(
                f"override {key}={REDACTED}: model.api_key_env must name an environment "
                f"variable, and the value given does not: {problem} (the value is not shown)",
                fix=KEY_FIX,
            )
        if name not in ("null", "None") and not os.environ.get(name, "").strip():
            shown = shown_variable(name)
            raise BenchregError(
                f"override {key}={shown or REDACTED}: {unset_variable_message(name)}",
                fix=f"export {shown}=<key> first, or set model.api_key_env=null for a server "
                "without authentication"
                if shown
                else KEY_FIX,
            )


def reword(exc: BaseException) -> BenchregError | None:
    """One line for a Hydra/OmegaConf error (None when ``exc`` is not one of theirs)."""
    from hydra.errors import (
        ConfigCompositionException,
        HydraException,
        MissingConfigException,
        OverrideParseException,
    )
    from omegaconf.errors import OmegaConfBaseException

    text = redact_text(str(exc))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    ambiguous = AMBIGUOUS.search(text)
    if ambiguous and isinstance(exc, HydraException):
        return ambiguous_value(ambiguous.group(1))
    if isinstance(exc, OverrideParseException):
        override = redact_text(str(getattr(exc, "override", "") or ""))
        useful = [ln for ln in lines if not ln.startswith(("See https", "Error parsing", "^"))]
        detail = useful[0] if useful else "cannot parse it"
        return BenchregError(
            f"malformed override {override!r}: {detail}",
            fix="write key=value; quote values with spaces or brackets, e.g. key='a b' "
            "(https://hydra.cc/docs/advanced/override_grammar/basic)",
        )
    if isinstance(exc, MissingConfigException):
        return _missing_config(exc, first)
    if isinstance(exc, ConfigCompositionException):
        return _composition(text, lines, first)
    if isinstance(exc, OmegaConfBaseException):
        key = getattr(exc, "full_key", None)
        return BenchregError(
            f"config error{f' at {key}' if key else ''}: {first}",
            fix="check the overrides and the ${...} interpolations",
        )
    if isinstance(exc, HydraException):
        return BenchregError(f"Hydra: {first}", fix="see python -m benchreg --help")
    return None


AMBIGUOUS = re.compile(r"Ambiguous value for argument '([^']*)'")


def ambiguous_value(override: str) -> BenchregError:
    """`task=a,b` without `-m`: Hydra's "Ambiguous value" in one line that says to add -m."""
    key, _, value = override.partition("=")
    return BenchregError(
        f"{override}: comma-separated values run a sweep, one job per value",
        fix=f"add -m: python -m benchreg -m {override} ...; for one list value write "
        f"{key}=[{value}], for one string with commas quote it: {key}='{value}'",
    )


def _missing_config(exc: Any, first: str) -> BenchregError:
    missing = str(getattr(exc, "missing_cfg_file", "") or "")
    options = [str(o) for o in (getattr(exc, "options", None) or [])]
    group, _, option = missing.rpartition("/")
    if not group:
        return BenchregError(first, fix="see python -m benchreg --help")
    return no_such_option(group, option, options)


def no_such_option(group: str, option: str, options: list[str]) -> BenchregError:
    """``group=option`` names no option of the config group (or no group)."""
    near = difflib.get_close_matches(option, options, n=1, cutoff=0.4)
    hint = f"did you mean {group}={near[0]}? " if near else ""
    listing = f"choose one of {', '.join(options)}" if options else "the group has no options"
    if not options and group not in known_groups():
        near_groups = difflib.get_close_matches(group, known_groups(), n=1, cutoff=0.4)
        hint = f"did you mean {near_groups[0]}? " if near_groups else ""
        return BenchregError(
            f"{group}={option}: unknown config group {group!r}",
            fix=f"{hint}groups: {', '.join(known_groups())}",
        )
    return BenchregError(
        f"{group}={option}: no option {option!r} in config group {group!r}", fix=f"{hint}{listing}"
    )


def _composition(text: str, lines: list[str], first: str) -> BenchregError:
    override = re.search(r"Could not (?:override|append to|delete from) '([^']*)'", text)
    key = override.group(1) if override else None
    if key is None:
        match = re.search(r"full_key: (\S+)", text)
        key = match.group(1) if match else None
    if ("not in struct" in text or "Could not override" in text) and key:
        return unknown_option(key)
    if "already at" in text and key:
        return BenchregError(f"{key} already exists", fix=f"drop the +: {key}=...")
    if "Could not delete" in text and key:
        return BenchregError(f"cannot delete {key}: {lines[-1]}", fix="check the key and value")
    detail = next((ln for ln in lines[1:] if not ln.startswith(("full_key", "object_type"))), "")
    return BenchregError(f"{first} {detail}".strip(), fix="see python -m benchreg --help")


def unknown_option(key: str) -> BenchregError:
    """``key`` is no option of the app's config."""
    near = difflib.get_close_matches(key, known_keys(), n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(near)}? " if near else ""
    return BenchregError(
        f"unknown option {key}",
        fix=f"{hint}`python -m benchreg --help` lists the options; +{key}=... adds a key "
        "where free keys are allowed (e.g. +model.params.<name>)",
    )


@cache
def known_groups() -> list[str]:
    from benchreg.app.config import family_groups

    groups = sorted({p.name for p in conf_dir().iterdir() if p.is_dir()} | set(family_groups()))
    return [*groups, "roots", "hydra/launcher", "hydra/sweeper", "hydra/job_logging"]


@cache
def known_keys() -> list[str]:
    """Dotted option names of the app config (run.*, model.* of every system, roots.*, ...)."""
    from omegaconf import OmegaConf

    from benchreg.app.config import family_groups
    from benchreg.core.registry import family_folders

    keys: list[str] = []
    base = OmegaConf.to_container(OmegaConf.load(conf_dir() / "config.yaml"), resolve=False)
    assert isinstance(base, dict)
    base.pop("defaults", None)
    base.pop("hydra", None)
    keys += _flatten(base)
    for path in sorted((conf_dir() / "model").glob("*.yaml")):
        data = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        if isinstance(data, dict):
            keys += [f"model.{k}" for k in _flatten(data)]
    keys += ["model", "roots", "mode", "task", "view", *family_groups()]
    keys += [f"roots.{name}" for name in family_folders()]
    keys += [
        f"hydra.{k}"
        for k in (
            "run.dir",
            "sweep.dir",
            "sweep.subdir",
            "searchpath",
            "job.chdir",
            "output_subdir",
            "verbose",
        )
    ]
    return sorted(set(keys))


def _flatten(data: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        out.append(name)
        if isinstance(value, dict) and value:
            out += _flatten(value, f"{name}.")
    return out


def os_error(exc: OSError) -> BenchregError:
    """A file-system failure (read-only folder, a file where a folder should be, a full disk)."""
    where = exc.filename if exc.filename is not None else None
    reason = exc.strerror or type(exc).__name__
    return BenchregError(
        f"cannot use this path: {reason}",
        where=Path(str(where)) if where is not None else None,
        fix="choose a writable folder (hydra.run.dir=... / hydra.sweep.dir=...) or fix the "
        "path's permissions",
    )
