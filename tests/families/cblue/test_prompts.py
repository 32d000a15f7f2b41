"""Prompts: a PromptCBLUE `input` is the whole prompt, sent as one user message."""

from __future__ import annotations

from pathlib import Path

from benchreg import load_task
from benchreg.core.pipeline import render_prompts

from .cblue_helpers import load


def test_prompt_is_the_input_as_one_user_message() -> None:
    spec = load_task("cblue/MedDG")
    dataset = load("MedDG", None)
    messages = render_prompts(spec, dataset.samples[:1], "dev", Path("."))[0]
    assert [m.role for m in messages] == ["user"]
    assert messages[0].content == dataset.samples[0].input["prompt"]
    assert messages[0].content.endswith("答：")
