"""Prompts: a PromptCBLUE `input` is the complete prompt; it becomes one user message.

A `system` template, when the task entry names one, is sent first as the system message.
"""

from __future__ import annotations

from collections.abc import Mapping

from benchreg.core import registry
from benchreg.core.types import Message, Sample


@registry.prompt_renderers.register("cblue_input")
def render_input(
    sample: Sample, templates: Mapping[str, str], view: str | None
) -> tuple[Message, ...]:
    system = templates.get("system", "").strip()
    user = Message("user", str(sample.input["prompt"]))
    return (Message("system", system), user) if system else (user,)
