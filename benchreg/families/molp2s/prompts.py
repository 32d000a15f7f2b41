"""Prompt rendering for MolP2S (system + user), from the release's or the shipped templates.

Placeholders, written `{name}` or `{{ name }}` (other braces are left alone): `record_id`,
`masked_smiles`, `mask` (JSON), `candidates` (numbered list), `n_candidates`, `property_names`,
`properties` (pretty JSON). In the structure-only condition `properties` says that no property
is supplied.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from benchreg.core import registry
from benchreg.core.io import pretty_json
from benchreg.core.text import fill_template
from benchreg.core.types import Message, Sample

NO_PROPERTY = (
    "No property is supplied for this record. Use only the structural context "
    "(the masked graph and the candidate list)."
)


def placeholder_values(sample: Sample) -> dict[str, str]:
    data = sample.input
    candidates = data["candidate_completed_smiles"]
    properties = data["properties"]
    return {
        "record_id": data["record_id"],
        "masked_smiles": data["masked_smiles"],
        "mask": json.dumps(data["mask"], ensure_ascii=False),
        "candidates": "\n".join(f"{i}. {smiles}" for i, smiles in enumerate(candidates)),
        "n_candidates": str(len(candidates)),
        "property_names": ", ".join(properties) if properties else "none",
        "properties": pretty_json(properties) if properties else NO_PROPERTY,
    }


@registry.prompt_renderers.register("molp2s")
def render(sample: Sample, templates: Mapping[str, str], view: str | None) -> tuple[Message, ...]:
    values = placeholder_values(sample)
    return (
        Message("system", fill_template(templates["system"], values)[0]),
        Message("user", fill_template(templates["user"], values)[0]),
    )
