"""The prompt renderer `retrieval`: placeholders, the region shapes per modality, and the
family's own templates."""

from __future__ import annotations

from pathlib import Path

import pytest

import benchreg.families.retrieval as retrieval_package
from benchreg.core import registry
from benchreg.core.types import Message, Sample
from benchreg.families.retrieval.prompts import placeholder_values, region_shapes, render

PROMPTS = Path(retrieval_package.__file__).parent / "prompts"


def sample(modality: str = "pdf", holder: str | None = None, as_of: str | None = None) -> Sample:
    return Sample("q", {"question": "Who restored the lens?"}, [],
                  {"modality": modality, "holder": holder, "as_of": as_of})


def test_registered() -> None:
    assert registry.prompt_renderers.get("retrieval") is render


@pytest.mark.parametrize(
    ("modality", "shapes"),
    [
        ("pdf", "{page} or {block, page} or {page_end, page_start}"),
        ("image", "{}"),
        ("ui_screenshot", "{bbox}"),
        ("video", "{t_end, t_start}"),
        ("code", "{path, symbol} or {line, path} or {line_end, line_start, path}"),
        ("conversation", "{turn} or {turn_end, turn_start}"),
    ],
)
def test_region_shapes(modality: str, shapes: str) -> None:
    assert region_shapes(modality) == shapes


def test_placeholder_values_without_scope() -> None:
    assert placeholder_values(sample()) == {
        "question": "Who restored the lens?",
        "modality": "pdf",
        "holder": "any",
        "as_of": "now",
        "region_shapes": "{page} or {block, page} or {page_end, page_start}",
    }


def test_placeholder_values_with_scope() -> None:
    values = placeholder_values(sample("conversation", "alice", "2024-02-01T00:00:00+00:00"))
    assert (values["holder"], values["as_of"]) == ("alice", "2024-02-01T00:00:00+00:00")


def test_render_fills_both_styles_and_leaves_json_braces() -> None:
    templates = {
        "system": "Memory of {{ modality }} sources.",
        "user": 'Q: {question} for {holder} as of {{as_of}}; shapes {region_shapes}; '
                'e.g. {"results": []} {unknown}',
    }
    assert render(sample("image", "bob"), templates, "dev") == (
        Message("system", "Memory of image sources."),
        Message("user", 'Q: Who restored the lens? for bob as of now; shapes {}; '
                        'e.g. {"results": []} {unknown}'),
    )


def test_the_family_templates_render() -> None:
    templates = {name: (PROMPTS / f"{name}.txt").read_text("utf-8") for name in ("system", "user")}
    system, user = render(sample("video", "alice"), templates, None)
    assert system.role == "system" and user.role == "user"
    assert system.content.startswith("You are a retrieval system over a memory of video sources.")
    assert "Question: Who restored the lens?\nHolder: alice\nAs of: now\n" in user.content
    assert "A video region is {t_end, t_start}." in user.content
    assert '{"results": [{"source_id": "...", "region": {...}, "score": 0.0}]}' in user.content
    for name in ("{question}", "{modality}", "{holder}", "{as_of}", "{region_shapes}"):
        assert name not in system.content + user.content
