"""Component params from a task entry, checked by name and by type before anything runs.

A component that is a function or class with keyword params (metrics, parsers, baselines,
validators, prediction readers, counters) is checked against its signature and its annotations;
a loader (called with a :class:`LoadContext`) declares its params with :func:`loader_params`.
Scalars are strict: `'no'` is not a bool, `"1"` is not an int, `true` is not a number.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, get_origin

from pydantic import TypeAdapter, ValidationError

from benchreg.core.errors import BenchregError

PARAMS_ATTR = "benchreg_params"
_LAX_ORIGINS = (tuple, set, frozenset, list, dict)  # YAML gives lists for tuples, etc.


def loader_params(**fields: Any) -> Callable[[Any], Any]:
    """Declare a loader's params and their types: ``@loader_params(check_smiles=bool)``."""

    def mark(fn: Any) -> Any:
        setattr(fn, PARAMS_ATTR, dict(fields))
        return fn

    return mark


def check_params(
    what: str,
    fn: Any,
    params: Mapping[str, Any],
    n_args: int = 0,
    *,
    locate: Callable[[str], str | None] = lambda key: None,
    complete: bool = False,
) -> None:
    """Raise one BenchregError (located by ``locate(key)``) for an unknown param or a param of
    the wrong type, and with ``complete`` for a required param that ``params`` lacks."""
    declared = getattr(fn, PARAMS_ATTR, None)
    required: list[str] = []
    if declared is not None:
        fields = dict(declared)
        open_ended = False
    else:
        fields, open_ended, required = _signature_fields(fn, n_args)
        if fields is None:
            return
    missing = [key for key in required if key not in params] if complete else []
    if missing:
        raise BenchregError(
            f"{what}: missing param {missing[0]!r}",
            where=locate(missing[0]),
            fix=f"give it under `params` ({', '.join(sorted(fields))})",
        )
    for key, value in params.items():
        if key not in fields:
            if open_ended:
                continue
            raise BenchregError(
                f"{what}: unknown param {key!r}",
                where=locate(key),
                fix=f"it takes: {', '.join(sorted(fields)) or 'no params'}",
            )
        annotation = fields[key]
        if annotation is inspect.Parameter.empty or annotation is Any:
            continue
        problem = _type_problem(annotation, value)
        if problem:
            raise BenchregError(
                f"{what}: param {key}={value!r}: {problem}",
                where=locate(key),
                fix=f"write a value of type {_name(annotation)}",
            )


def _signature_fields(fn: Any, n_args: int) -> tuple[dict[str, Any] | None, bool, list[str]]:
    """The keyword params after ``n_args`` positional ones (name -> annotation), whether it
    takes ``**kwargs``, and the names without a default."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None, True, []
    try:
        hints = typing.get_type_hints(fn.__init__ if inspect.isclass(fn) else fn)
    except Exception:
        hints = {}
    fields: dict[str, Any] = {}
    required: list[str] = []
    open_ended = False
    for param in list(signature.parameters.values())[n_args:]:
        if param.kind is param.VAR_KEYWORD:
            open_ended = True
        elif param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD):
            fields[param.name] = hints.get(param.name, inspect.Parameter.empty)
            if param.default is param.empty:
                required.append(param.name)
    return fields, open_ended, required


def _type_problem(annotation: Any, value: Any) -> str | None:
    origin = get_origin(annotation)
    strict = origin not in _LAX_ORIGINS and annotation not in _LAX_ORIGINS
    try:
        TypeAdapter(annotation).validate_python(value, strict=strict)
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"])
    except Exception:  # an annotation pydantic cannot handle: no type check
        return None
    return None


def _name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("typing.", "")
