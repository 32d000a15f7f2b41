"""The MolP2S prompt renderer: placeholders, the structure-only wording, release templates."""

from __future__ import annotations

from benchreg.core.types import Sample
from benchreg.families.molp2s.prompts import NO_PROPERTY, render
from tests.families.molp2s.conftest import SAMPLE


def test_prompt_has_candidates_and_properties() -> None:
    templates = {"system": "sys", "user": "{masked_smiles}\n{candidates}\n{properties} {x}"}
    system, user = render(SAMPLE, templates, "correct")
    assert system.role == "system" and user.role == "user"
    assert "0. c1ccccc1CO\n1. c1ccccc1CN" in user.content
    assert '"gap"' in user.content
    assert "{x}" in user.content  # unknown braces are left alone


def test_structure_only_prompt_says_no_property() -> None:
    structure_only = Sample(id="r0", input={**SAMPLE.input, "properties": {}}, gold=0)
    _, user = render(structure_only, {"system": "", "user": "{properties}"}, "structure_only")
    assert user.content == NO_PROPERTY


def test_release_prompts_win_over_shipped_ones(release) -> None:
    from benchreg import load_task
    from benchreg.core.pipeline import load_dataset, render_prompts

    root = release()
    spec = load_task("molp2s/gap")
    samples = load_dataset(spec, "correct", root).samples
    shipped = render_prompts(spec, samples, "correct", root)[0]
    assert "Masked SMILES" in shipped[1].content

    (root / "prompts").mkdir()
    (root / "prompts" / "single_property_user.txt").write_text("RELEASE {record_id}")
    system, user = render_prompts(spec, samples, "correct", root)[0]
    assert user.content == f"RELEASE {samples[0].id}"
    assert system.content == shipped[0].content  # no release system prompt: shipped one
