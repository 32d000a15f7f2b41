"""The MolP2S record model: one task line plus its label."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

VIEWS = ("correct", "shuffled", "counterfactual")
STRUCTURE_ONLY = "structure_only"
DUMMY_ATOM_TOKENS = ("[*]", "*")


class TaskLine(BaseModel):
    """A line of `<view>.jsonl`; extra fields are kept as metadata."""

    model_config = ConfigDict(extra="allow")

    record_id: str = Field(min_length=1)
    masked_smiles: str = Field(min_length=1)
    mask: dict[str, Any]
    properties: dict[str, Any]
    candidate_completed_smiles: list[str] = Field(min_length=1)

    @field_validator("mask", mode="before")
    @classmethod
    def _token_shorthand(cls, value: Any) -> Any:
        """A bare string is the mask token: `"mask": "[MASK]"` == `{"token": "[MASK]"}`."""
        return {"token": value} if isinstance(value, str) else value


class LabelLine(BaseModel):
    model_config = ConfigDict(extra="allow")

    record_id: str = Field(min_length=1)
    label: StrictInt  # "1" or true is not index 1
