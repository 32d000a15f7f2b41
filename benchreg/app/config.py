"""From the composed Hydra config to core objects: the bound task, its folders, run options.

`task` is a plain string in the config; the core (:func:`benchreg.core.task.load_task`) composes
and binds it. Hydra composes only the app config (model, roots, run options).
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchreg.core.errors import BenchregError

if TYPE_CHECKING:
    from omegaconf import DictConfig

    from benchreg.core.options import RunOptions
    from benchreg.core.task import Task

MODES = ("run", "validate", "prompts")
ModelT = TypeVar("ModelT", bound=BaseModel)


def register_family_roots() -> None:
    """The `roots` config node: one key per registered family (null = its embedded sample), so
    `roots.<family>=<dir>` works for every family, including ones added by other packages."""
    from hydra.core.config_store import ConfigStore

    from benchreg.core.registry import all_families

    roots = {family.name: None for family in all_families()}
    ConfigStore.instance().store(group="roots", name="families", node=roots)


def to_dict(node: Any) -> dict[str, Any]:
    return to_plain(node)


def searchpath_folders(searchpath: Iterable[str] | None) -> list[Path]:
    """The `file://` entries of `hydra.searchpath` (entries at `<dir>/tasks/<group>/<name>`)."""
    folders = []
    for entry in searchpath or ():
        text = str(entry)
        if text.startswith("file://"):
            folders.append(Path(text.removeprefix("file://")).expanduser().resolve())
    return folders


def task_name(cfg: DictConfig) -> str:
    name = cfg.get("task")
    if not isinstance(name, str) or not name.strip():
        raise BenchregError("no task selected", fix="add task=<family>/<name>")
    return name.strip()


@cache
def family_groups() -> dict[str, Path]:
    """Config groups that families declare (``<family>/conf/<group>/``) -> their folders (no
    family imported)."""
    from benchreg.core.registry import FAMILY_CONF, family_folders

    groups: dict[str, Path] = {}
    for folder in family_folders().values():
        conf = folder / FAMILY_CONF
        if conf.is_dir():
            groups.update({p.name: p for p in sorted(conf.iterdir()) if p.is_dir()})
    return groups


LOADER_PARAMS = "loader_params"
LOADER_PARAM_PREFIXES = ("task.loader.params.", f"{LOADER_PARAMS}.")


def with_family_groups(argv: list[str]) -> list[str]:
    """Overrides as Hydra takes them: ``chunker=page`` -> ``+chunker=page`` for a family's own
    group (the app config's defaults list does not name it); a loader param
    (``task.loader.params.split=x`` or ``loader_params.split=x``) ->
    ``+loader_params.split=x``; a mapping value (``model.extra_body={top_k: 20}``) -> ``++...``,
    which Hydra needs to put keys into a mapping the config leaves empty (the app checks every
    key afterwards, so a misspelt one is still refused)."""
    groups = family_groups()
    out = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        prefix = next((p for p in LOADER_PARAM_PREFIXES if key.startswith(p)), None)
        if sep and key in groups:
            out.append(f"+{arg}")
        elif sep and prefix is not None:
            out.append(f"+{LOADER_PARAMS}.{key.removeprefix(prefix)}={value}")
        elif sep and not key.startswith(("+", "~")) and value.lstrip().startswith("{"):
            out.append(f"++{arg}")
        else:
            out.append(arg)
    return out


def bound_task(cfg: DictConfig, searchpath: Iterable[str] = ()) -> Task:
    """Compose, validate and bind the selected entry; errors point at the entry file (or its
    base)."""
    task = _entry_task(task_name(cfg), tuple(searchpath_folders(searchpath)))
    overrides = app_settings(cfg).loader_params
    if not overrides:
        return task
    params = {**task.loader.params, **overrides}
    try:
        return task.evolve(loader={"name": task.loader.name, "params": params})
    except BenchregError as exc:
        raise BenchregError(exc.what, where=f"override {LOADER_PARAMS}", fix=exc.fix) from None


_BOUND: dict[tuple[str, tuple[Path, ...]], tuple[Task, tuple[Any, ...]]] = {}


def _entry_task(name: str, folders: tuple[Path, ...]) -> Task:
    """:func:`~benchreg.core.task.load_task`, bound once per process while none of the entry's
    files changed (the jobs of a sweep that differ in `view=` or `model=` share it)."""
    from benchreg.core.entries import task_folders
    from benchreg.core.task import load_task

    key = (name, tuple(task_folders(folders)))  # BENCHREG_TASKS_PATH and the built-in folder too
    kept = _BOUND.get(key)
    if kept is not None and _files_state(kept[0].sources) == kept[1]:
        return kept[0]
    task = load_task(name, folders)
    state = _files_state(task.sources)
    if state is not None:
        _BOUND[key] = (task, state)
    return task


def _files_state(paths: Iterable[Path]) -> tuple[Any, ...] | None:
    """Each file's (path, mtime, size, inode); None when one is gone or was changed too recently
    for its mtime to tell a later change apart (core.io's rule for racy timestamps)."""
    from benchreg.core.io import RACY_NS

    out = []
    now = time.time_ns()
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            return None
        if now - st.st_mtime_ns <= RACY_NS:
            return None
        out.append((str(path), st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


def mode(cfg: DictConfig) -> str:
    return app_settings(cfg).mode


# --- the schema of every app option (`run.*`, `model.*`, `mode`, `view`, `roots.*`) -------------


class RunSettings(BaseModel):
    """`run.*`: strict types (a quoted number or `no` is not taken for an int or a bool)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    batch_size: int = Field(64, ge=1)
    limit: int | None = Field(None, ge=1)
    bootstrap: int = Field(1000, ge=0)
    seed: int = Field(0, ge=0, le=2**32 - 1)
    progress: bool = True
    cache: Literal["read_write", "read_only", "off"] = "read_write"
    cache_dir: str | None = None
    data_cache: bool = True
    overwrite: bool = False
    final: bool = False
    accept_errors: bool = False
    repeats: int = Field(1, ge=1, le=1000)
    max_tokens_total: int | None = Field(None, ge=1)
    max_cost: float | None = Field(None, gt=0)
    price_prompt_per_1m: float | None = Field(None, ge=0)
    price_completion_per_1m: float | None = Field(None, ge=0)


class _ModelBase(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str
    label: str | None = None


class BaselineModel(_ModelBase):
    params: dict[str, Any] = Field(default_factory=dict)


class RandomModel(_ModelBase):
    seed: int = Field(0, ge=0)


class PredictionsModel(_ModelBase):
    path: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


MODEL_SCHEMAS: dict[str, type[BaseModel]] = {
    "baseline": BaselineModel,
    "random": RandomModel,
    "predictions": PredictionsModel,
}


def _chat_schemas() -> dict[str, type[BaseModel]]:
    try:
        from benchreg.systems.chat_config import ChatConfig, LlamaConfig
    except ImportError:  # pragma: no cover - the model-server systems are optional
        return {}
    return {"openai": ChatConfig, "llama_cpp": LlamaConfig}


class AppSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    task: str = Field(min_length=1)
    view: str | None = None
    mode: Literal["run", "validate", "prompts"] = "run"
    run: RunSettings = Field(default_factory=RunSettings)
    roots: dict[str, str | None] = Field(default_factory=dict)
    model: dict[str, Any] = Field(default_factory=dict)
    loader_params: dict[str, Any] = Field(default_factory=dict)


def app_settings(cfg: DictConfig | Mapping[str, Any]) -> AppSettings:
    """Validate the composed app config (not `hydra.*`); one error naming the key and the fix."""
    plain = to_plain(cfg, skip=("hydra",))
    if isinstance(plain.get("view"), int) and not isinstance(plain.get("view"), bool):
        plain["view"] = str(plain["view"])  # `view=1` reads as an int; views are names
    reject_secrets(plain)
    settings = _validated(AppSettings, plain, prefix="")
    validate_roots(settings.roots)
    validate_model(settings.model)
    return settings


def reject_secrets(node: Any, prefix: str = "") -> None:
    """No secret in the config (from a config file, an override or `${oc.env:...}`): it would
    reach provenance.json, folder names and logs. Systems read keys from the environment."""
    from benchreg.core.provenance import is_secret_key, looks_secret

    if isinstance(node, Mapping):
        for key, value in node.items():
            name = f"{prefix}{key}"
            if is_secret_key(key) and value not in (None, "", {}, []):
                raise _secret_error(name)
            reject_secrets(value, f"{name}.")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            reject_secrets(value, f"{prefix}{index}.")
    elif isinstance(node, str) and looks_secret(node):
        raise _secret_error(prefix.rstrip("."))


def _secret_error(key: str) -> BenchregError:
    return BenchregError(
        f"{key} holds a secret (by its name or its form); secrets are never stored in the config",
        fix="keep it in an environment variable and name the variable, e.g. "
        "model.api_key_env=OPENAI_API_KEY",
    )


def validate_roots(roots: Mapping[str, Any]) -> None:
    from benchreg.core.registry import all_families

    if not roots:
        return
    known = [family.name for family in all_families()]
    for family in roots:
        if family not in known:
            near = difflib.get_close_matches(family, known, n=1, cutoff=0.5)
            hint = f"did you mean roots.{near[0]}? " if near else ""
            raise BenchregError(
                f"unknown option roots.{family}: no such family",
                fix=f"{hint}families: {', '.join(known)}",
            )


def validate_model(model: Mapping[str, Any]) -> BaseModel | None:
    """`model.*` against the schema of the chosen system (its conf/model/<name>.yaml)."""
    from benchreg.core import registry

    name = model.get("name")
    if not isinstance(name, str) or not name:
        raise BenchregError(
            "model.name is not set", fix="choose a system: model=baseline|random|predictions|..."
        )
    schema = MODEL_SCHEMAS.get(name) or _chat_schemas().get(name)
    if schema is None:
        if name not in registry.systems:
            raise BenchregError(
                f"model.name={name!r}: unknown system",
                fix=f"known systems: {', '.join(registry.systems.names())}",
            )
        return None  # a system registered by another package validates its own config
    data = {k: v for k, v in model.items() if not (k == "path" and v == "???")}
    if name == "predictions" and "path" not in data:
        raise BenchregError(
            "model=predictions needs a file", fix="add model.path=<predictions file>"
        )
    return _validated(schema, data, prefix="model.")


def _validated(schema: type[ModelT], data: Mapping[str, Any], *, prefix: str) -> ModelT:
    try:
        return schema.model_validate(dict(data), strict=True)
    except ValidationError as exc:
        raise config_error(exc, schema, data, prefix) from None


def config_error(
    exc: ValidationError, schema: type[BaseModel], data: Mapping[str, Any], prefix: str
) -> BenchregError:
    error = exc.errors()[0]
    loc = [str(p) for p in error["loc"] if not str(p).startswith(("function-", "constrained-"))]
    loc = [p for p in loc if p not in ("int", "str", "none", "bool", "float", "literal")]
    key = prefix + ".".join(loc)
    if error["type"] == "extra_forbidden":
        known = _fields_at(schema, loc[:-1])
        near = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.5)
        hint = f"did you mean {prefix}{'.'.join([*loc[:-1], near[0]])}? " if near else ""
        return BenchregError(f"unknown option {key}", fix=f"{hint}known: {', '.join(known)}")
    value = _value_at(data, loc)
    shown = repr(value) if value is not _MISSING else "(missing)"
    return BenchregError(
        f"bad value {key}={shown}: {error['msg']}",
        fix=f"set {key}=<{_expected(schema, loc) or 'a valid value'}>",
    )


_MISSING = object()


def _value_at(data: Mapping[str, Any], loc: list[str]) -> Any:
    node: Any = data
    for part in loc:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _field(schema: type[BaseModel], loc: list[str]) -> Any:
    model: Any = schema
    info = None
    for part in loc:
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return info
        info = fields[part]
        model = info.annotation
    return info


def _fields_at(schema: type[BaseModel], loc: list[str]) -> list[str]:
    model: Any = schema
    for part in loc:
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return []
        model = fields[part].annotation
    return sorted(getattr(model, "model_fields", {}))


def _expected(schema: type[BaseModel], loc: list[str]) -> str:
    info = _field(schema, loc)
    if info is None:
        return ""
    text = _type_name(info.annotation)
    nullable = text.endswith(" or null")
    text = text.removesuffix(" or null")
    for item in info.metadata:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            bound = getattr(item, attr, None)
            if bound is not None:
                text += f" {sign} {bound}"
    return f"{text} or null" if nullable else text


def _type_name(annotation: Any) -> str:
    args = get_args(annotation)
    if get_origin(annotation) is Literal:
        return "|".join(map(str, args))
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return " or ".join(_type_name(a) for a in rest) + " or null"
    if annotation is bool:
        return "true|false"
    return getattr(annotation, "__name__", str(annotation))


def to_plain(cfg: DictConfig | Mapping[str, Any], *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The config as plain data, without the top-level keys ``skip`` (never resolved); an
    interpolation that fails to resolve is one clear error."""
    if isinstance(cfg, dict):  # plain data already (the pre-check's): no OmegaConf needed
        return {k: v for k, v in cfg.items() if k not in skip}
    from omegaconf import DictConfig
    from omegaconf.errors import OmegaConfBaseException

    if not isinstance(cfg, DictConfig):
        return {k: v for k, v in cfg.items() if k not in skip}
    try:
        return {str(key): _plain_value(cfg, str(key)) for key in cfg if key not in skip}
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or ""
        raise BenchregError(
            f"cannot resolve {key or 'the config'}: {str(exc).splitlines()[0]}",
            fix="check the ${...} interpolations in your overrides",
        ) from None


def _plain_value(cfg: DictConfig, key: str) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if OmegaConf.is_missing(cfg, key):
        return "???"  # as OmegaConf.to_container leaves a mandatory value not given
    node = cfg[key]
    if isinstance(node, DictConfig | ListConfig):
        return OmegaConf.to_container(node, resolve=True)
    return node


def run_options(cfg: DictConfig) -> RunOptions:
    from benchreg.core.options import RunOptions

    run = app_settings(cfg).run
    return RunOptions(
        batch_size=run.batch_size,
        limit=run.limit,
        n_boot=run.bootstrap,
        seed=run.seed,
        progress=run.progress,
        cache=run.cache,
        cache_dir=run.cache_dir or None,
        data_cache=run.data_cache,
        overwrite=run.overwrite,
        final=run.final,
        accept_errors=run.accept_errors,
        repeats=run.repeats,
        max_tokens_total=run.max_tokens_total,
        max_cost=run.max_cost,
        price_prompt_per_1m=run.price_prompt_per_1m,
        price_completion_per_1m=run.price_completion_per_1m,
    )
