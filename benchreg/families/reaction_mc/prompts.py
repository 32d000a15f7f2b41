"""Prompt rendering: question blocks filled into `prompt_<type>.txt` templates.

Placeholders (both `{{name}}` and `{name}` are replaced by
:func:`benchreg.core.text.fill_template`; any other brace text is left alone, so templates may
contain JSON examples): `reactants`, `products`, `constant_conditions`, `fixed_conditions`,
`reference_conditions`, `options`, `target_key`, `varying_keys`, `n_options`, `max_index`,
`question_type`, `question_id`, and `question` (all blocks in one).
A `user` template that uses none of them gets the `question` block appended after its text.
Template parts `system` and `user` become messages of those roles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.text import fill_template
from benchreg.core.types import Message, Sample

KEY_LABELS = {
    "catalysts": "催化剂 (catalysts)",
    "ligand": "配体 (ligand)",
    "reagents": "试剂 (reagents)",
    "solvents": "溶剂 (solvents)",
}
EMPTY = "—"
OUTCOME_LABELS = (("yield", "yield", "%"), ("ee", "ee", "%"), ("er", "er", ""),
                  ("dr", "dr", ""), ("rr", "rr", ""))


def format_item(item: Any) -> str:
    if isinstance(item, Mapping):
        content = str(item.get("content") or "").strip()
        smiles = str(item.get("SMILES") or "").strip()
        if content and smiles and smiles != content:
            return f"{content} (`{smiles}`)"
        return content or (f"`{smiles}`" if smiles else EMPTY)
    return str(item)


def format_value(value: Any) -> str:
    if value is None:
        return EMPTY
    if isinstance(value, list):
        parts = [format_item(item) for item in value]
        parts = [p for p in parts if p != EMPTY]
        return "; ".join(parts) if parts else EMPTY
    text = format_item(value)
    return text if text.strip() else EMPTY


def format_conditions(conditions: Mapping[str, Any] | None, indent: str = "") -> str:
    if not conditions:
        return f"{indent}{EMPTY}"
    return "\n".join(
        f"{indent}- **{KEY_LABELS.get(key, key)}**: {format_value(conditions[key])}"
        for key in sorted(conditions)
    )


def format_molecules(molecules: list[Mapping[str, Any]] | None) -> str:
    if not molecules:
        return EMPTY
    return "\n".join(f"- {format_item(m)}" for m in molecules)


def _number_text(value: Any, unit: str) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{float(value):.1f}{unit}"
    return str(value)


def format_outcome(outcome: Mapping[str, Any]) -> str:
    parts = [
        f"{label}={_number_text(outcome[key], unit)}"
        for key, label, unit in OUTCOME_LABELS
        if outcome.get(key) not in (None, "")
    ]
    return ", ".join(parts)


def format_references(references: list[Mapping[str, Any]] | None) -> str:
    if not references:
        return EMPTY
    blocks = []
    for k, ref in enumerate(references, start=1):
        outcome = format_outcome(ref.get("outcome") or {})
        head = f"*Reference {k}" + (f" ({outcome})" if outcome else "") + ":*"
        blocks.append(f"{head}\n{format_conditions(ref.get('conditions'), '  ')}")
    return "\n\n".join(blocks)


def format_options(options: list[Mapping[str, Any]]) -> str:
    return "\n\n".join(
        f"*Option {i}:*\n{format_conditions(option, '  ')}" for i, option in enumerate(options)
    )


def question_fields(sample: Sample) -> dict[str, str]:
    data = sample.input
    inp = data["input"]
    options = data["options"]
    fields = {
        "question_id": sample.id,
        "question_type": str(data["question_type"]),
        "target_key": str(data.get("target_key") or ""),
        "varying_keys": ", ".join(data.get("varying_keys") or []),
        "n_options": str(len(options)),
        "max_index": str(len(options) - 1),
        "reactants": format_molecules(inp.get("reactants")),
        "products": format_molecules(inp.get("products")),
        "constant_conditions": format_conditions(inp.get("constant_conditions")),
        "fixed_conditions": format_conditions(inp.get("fixed_conditions")),
        "reference_conditions": format_references(inp.get("reference_conditions")),
        "options": format_options(options),
    }
    fields["question"] = _question_block(fields, inp)
    return fields


def _question_block(fields: Mapping[str, str], inp: Mapping[str, Any]) -> str:
    parts = [
        f"**反应物 (reactants)：**\n{fields['reactants']}",
        f"**产物 (products)：**\n{fields['products']}",
        f"**不变条件 (constant conditions)：**\n{fields['constant_conditions']}",
    ]
    if inp.get("fixed_conditions") is not None:
        parts.append(f"**固定条件 (fixed conditions)：**\n{fields['fixed_conditions']}")
    if inp.get("reference_conditions"):
        parts.append(f"**Reference 条件 (reference conditions)：**\n"
                     f"{fields['reference_conditions']}")
    parts.append(f"**选项 (options)：**\n{fields['options']}")
    return "\n\n".join(parts)


def fill(template: str, fields: Mapping[str, str], append_question: bool = True) -> str:
    """Replace `{{name}}` / `{name}` for known names; append the question when none is used."""
    text, used = fill_template(template, fields)
    if not used and append_question:
        text = f"{text.rstrip()}\n\n{fields['question']}\n"
    return text


@registry.prompt_renderers.register("reaction_mc")
def render(sample: Sample, templates: Mapping[str, str], view: str | None) -> tuple[Message, ...]:
    fields = question_fields(sample)
    messages = []
    for role in ("system", "user"):
        if role in templates:
            text = fill(templates[role], fields, append_question=role == "user")
            messages.append(Message(role=role, content=text))
    return tuple(messages)

