"""The MolP2S record rules: one task line and its label line (spec 003, "Task").

The pydantic types here are the only place these rules are written. Lines are validated a whole
file at a time (a ``TypeAdapter`` of a list: one call into pydantic-core), and the first error
is reported at its line with the field and pydantic's message.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from benchreg.core.errors import BenchregError, at

VIEWS = ("correct", "shuffled", "counterfactual")
STRUCTURE_ONLY = "structure_only"
DUMMY_ATOM_TOKENS = ("[*]", "*")


def _token_shorthand(value: Any) -> Any:
    """A bare string is the mask token: `"mask": "[MASK]"` == `{"token": "[MASK]"}`."""
    return {"token": value} if isinstance(value, str) else value


class TaskLine(TypedDict):
    """A line of `<view>.jsonl`; extra fields are kept as metadata."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]

    record_id: Annotated[str, Field(min_length=1)]
    masked_smiles: Annotated[str, Field(min_length=1)]
    mask: Annotated[dict[str, Any], BeforeValidator(_token_shorthand)]
    properties: dict[str, Any]
    candidate_completed_smiles: Annotated[list[str], Field(min_length=1)]


class LabelLine(TypedDict):
    """A line of `<view>.labels.jsonl`: the 0-based index of the target candidate."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]

    record_id: Annotated[str, Field(min_length=1)]
    label: StrictInt  # "1" or true is not index 1


TASK_FIELDS = tuple(TaskLine.__annotations__)
LABEL_FIELDS = tuple(LabelLine.__annotations__)
_TASK_LINES = TypeAdapter(list[TaskLine])
_LABEL_LINES = TypeAdapter(list[LabelLine])


def task_lines(values: list[Any], path: Path, numbers: Sequence[int]) -> list[TaskLine]:
    """The decoded task lines of ``path`` (at line ``numbers``), validated."""
    return _validated(_TASK_LINES, TASK_FIELDS, values, path, numbers)


def label_lines(values: list[Any], path: Path, numbers: Sequence[int]) -> list[LabelLine]:
    """The decoded label lines of ``path`` (at line ``numbers``), validated."""
    return _validated(_LABEL_LINES, LABEL_FIELDS, values, path, numbers)


def _validated(
    adapter: TypeAdapter[Any],
    fields: tuple[str, ...],
    values: list[Any],
    path: Path,
    numbers: Sequence[int],
) -> Any:
    try:
        return adapter.validate_python(values)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]  # pydantic lists them in item order
        index, *loc = error["loc"]
        field = ".".join(str(p) for p in loc) or "line"
        raise BenchregError(
            f"{field}: {error['msg']}",
            where=at(path, numbers[int(index)]),
            fix=f"expected fields: {', '.join(fields)}",
        ) from None
