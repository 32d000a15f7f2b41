"""The rules of a PromptCBLUE split file's line (spec 001, "Inputs"; docs/cblue.md).

:class:`SplitLine` is the only place these rules are written. Decoded lines are validated in
batches (a ``TypeAdapter`` of a list: one call into pydantic-core per batch), and the first
violation is reported at its ``file:line`` with the field, in the words users of the loader
know (a missing field, not an object, not a string).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NotRequired

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from benchreg.core.errors import BenchregError, at


class SplitLine(TypedDict):
    """One line of `<split>.json`: the prompt, the gold text, the task and the sample's id;
    other fields are allowed (and not read)."""

    # strict: a number is not a string; extra fields: releases add their own
    __pydantic_config__ = ConfigDict(strict=True, extra="allow")  # type: ignore[misc]

    input: str
    target: str
    answer_choices: NotRequired[list[str] | None]
    task_type: NotRequired[str | None]
    task_dataset: str
    sample_id: str


FIELDS = tuple(SplitLine.__annotations__)
REQUIRED_FIELDS = tuple(name for name in FIELDS if name in SplitLine.__required_keys__)
BATCH = 4096  # lines per pydantic call: a bad file stops near its first bad line
_LINES = TypeAdapter(list[SplitLine])


def checked_lines(lines: Iterable[tuple[int, Any]], path: Path) -> Iterator[tuple[int, SplitLine]]:
    """``(line number, line)`` of the decoded lines ``(line number, value)`` of ``path``, each
    validated; the first line that breaks a rule raises its located error."""
    numbers: list[int] = []
    values: list[Any] = []
    for number, value in lines:
        numbers.append(number)
        values.append(value)
        if len(values) == BATCH:
            yield from zip(numbers, _validated(values, numbers, path), strict=True)
            numbers, values = [], []
    if values:
        yield from zip(numbers, _validated(values, numbers, path), strict=True)


def _validated(values: list[Any], numbers: Sequence[int], path: Path) -> list[SplitLine]:
    try:
        return _LINES.validate_python(values)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    index = int(errors[0]["loc"][0])  # pydantic lists the errors in item order
    mine = [error for error in errors if error["loc"][0] == index]
    what, fix = _problem(mine)
    sample_id = values[index].get("sample_id") if isinstance(values[index], dict) else None
    if isinstance(sample_id, str):
        what += f" (sample_id {sample_id!r})"
    raise BenchregError(what, where=at(path, numbers[index]), fix=fix)


def _problem(errors: list[ErrorDetails]) -> tuple[str, str | None]:
    """What is wrong with one line, from its pydantic errors, and how to fix it."""
    missing = {error["loc"][1] for error in errors if error["type"] == "missing"}
    if missing:
        names = ", ".join(name for name in FIELDS if name in missing)
        return f"line lacks field(s) {names}", f"each line needs {', '.join(FIELDS)}"
    error = errors[0]
    if len(error["loc"]) == 1:
        return "a PromptCBLUE line must be a JSON object", None
    field = str(error["loc"][1])
    if field == "answer_choices" and error["type"] in ("list_type", "string_type"):
        return "answer_choices must be a list of strings or null", None
    if error["type"] == "string_type" and field in REQUIRED_FIELDS and len(error["loc"]) == 2:
        return f"field {field!r} must be a string", None
    where = ".".join(str(part) for part in error["loc"][1:])
    return f"field {where}: {error['msg']}", None
