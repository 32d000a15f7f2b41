"""Prompt renderer `reaction_mc`: placeholders (core.text.fill_template) and question blocks."""

from __future__ import annotations

from pathlib import Path

from benchreg import load_task
from benchreg.core.pipeline import data_root_for, load_dataset, render_prompts
from benchreg.families.reaction_mc.prompts import fill


def test_fill_supports_both_brace_styles_and_leaves_other_braces() -> None:
    fields = {"options": "OPTS", "n_options": "3", "question": "Q"}
    text = fill('n={{n_options}} {n_options} {{ options }} {"answer": 0} {unknown}', fields)
    assert text == 'n=3 3 OPTS {"answer": 0} {unknown}'


def test_fill_appends_question_when_no_placeholder() -> None:
    assert fill("Pick the best option.", {"question": "Q?"}) == "Pick the best option.\n\nQ?\n"


def _prompts(task: str, root: Path | None = None):
    spec = load_task(f"reaction_mc/{task}")
    data_root = data_root_for(spec, {"reaction_mc": str(root)} if root else {})
    samples = load_dataset(spec, None, data_root).samples
    return samples, render_prompts(spec, samples, None, data_root)


def test_reference_prompt_shows_references_and_options() -> None:
    _, prompts = _prompts("all_varying_reference")
    text = prompts[0][-1].content
    assert prompts[0][-1].role == "user"
    assert "*Reference 1 (yield=27.0%):*" in text and "*Reference 3 (yield=42.0%):*" in text
    assert "*Option 4:*" in text and "0 到 4 之间" in text
    assert "**试剂 (reagents)**: NaBr (`[Br-].[Na+]`)" in text
    assert "{{" not in text


def test_control_prompt_has_no_references() -> None:
    _, prompts = _prompts("all_varying_reference_control")
    assert all("Reference 1" not in p[-1].content for p in prompts)


def test_release_prompt_file_wins(tmp_path: Path) -> None:
    from benchreg.families.reaction_mc.build import build, write_release

    sample = Path(__file__).resolve().parents[3] / "benchreg/families/reaction_mc/sample_source"
    questions, report = build(sample / "demo_config.yaml", seed=0)
    write_release(tmp_path, questions, report)
    (tmp_path / "prompt_single_varying.txt").write_text("RELEASE {target_key}: {{options}}")
    _, prompts = _prompts("single_varying_reference_control", tmp_path)
    assert prompts[0][-1].content.startswith("RELEASE ")
    assert "*Option 0:*" in prompts[0][-1].content
