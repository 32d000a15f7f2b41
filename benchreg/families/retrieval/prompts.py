"""Prompt rendering for retrieval (system + user), for a model that returns ranked results.

Placeholders (`{name}` or `{{ name }}`): `question`, `modality`, `holder`, `as_of`,
`region_shapes` (the region shapes a result of the modality may use).
"""

from __future__ import annotations

from collections.abc import Mapping

from benchreg.core import registry
from benchreg.core.text import fill_template
from benchreg.core.types import Message, Sample
from benchreg.families.retrieval.regions import GOLD_SHAPES, RANGE_SHAPES


def region_shapes(modality: str) -> str:
    shapes = GOLD_SHAPES[modality] + RANGE_SHAPES.get(modality, ())
    return " or ".join("{" + ", ".join(sorted(s)) + "}" for s in shapes)


def placeholder_values(sample: Sample) -> dict[str, str]:
    modality = str(sample.meta["modality"])
    return {
        "question": str(sample.input["question"]),
        "modality": modality,
        "holder": str(sample.meta.get("holder") or "any"),
        "as_of": str(sample.meta.get("as_of") or "now"),
        "region_shapes": region_shapes(modality),
    }


@registry.prompt_renderers.register("retrieval")
def render(sample: Sample, templates: Mapping[str, str], view: str | None) -> tuple[Message, ...]:
    values = placeholder_values(sample)
    return (
        Message("system", fill_template(templates["system"], values)[0]),
        Message("user", fill_template(templates["user"], values)[0]),
    )
