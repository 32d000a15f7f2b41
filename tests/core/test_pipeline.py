"""core.pipeline: the data root, the loaded and checked data set, prompt templates and the
system, all before a system is asked (the embedded samples, offline)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import pipeline
from benchreg.core.errors import BenchregError, UnknownComponentError
from benchreg.core.options import RunOptions
from benchreg.core.system import Labelled, PerSampleSystem
from benchreg.core.task import Bound, BoundPrompt, Task, load_task
from benchreg.core.types import Dataset, Degraded, LoadContext, Message, Sample
from benchreg.core.validation import Finding

QUIET = RunOptions(progress=False, n_boot=0)


@pytest.fixture(scope="module")
def gap() -> Task:
    return load_task("molp2s/gap")


@pytest.fixture(scope="module")
def pdf() -> Task:
    return load_task("retrieval/pdf")


# --- data root and load context -----------------------------------------------------------------


def test_the_embedded_sample_is_the_default_root(gap: Task) -> None:
    root = pipeline.data_root_for(gap, {})
    assert root == gap.family_info.sample_root.resolve()
    assert (root / "data" / "gap").is_dir()
    # a root of another family is no root of this one
    assert pipeline.data_root_for(gap, {"retrieval": "/nonexistent"}) == root


def test_a_configured_root_is_used_expanded_and_resolved(
    gap: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "release").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    assert pipeline.data_root_for(gap, {"molp2s": "~/release"}) == (tmp_path / "release")
    assert pipeline.data_root_for(gap, {"molp2s": tmp_path / "release" / ".."}) == tmp_path


@pytest.mark.parametrize("bad", ["missing", "a_file"])
def test_a_root_that_is_no_folder_is_refused(gap: Task, tmp_path: Path, bad: str) -> None:
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(BenchregError) as info:
        pipeline.data_root_for(gap, {"molp2s": str(tmp_path / bad)})
    assert info.value.where == str(tmp_path / bad)
    assert "roots.molp2s" in str(info.value.fix)


def test_load_context_resolves_the_data_paths_and_carries_params(pdf: Task, gap: Task) -> None:
    root = pipeline.data_root_for(gap, {})
    ctx = pipeline.load_context(gap, "shuffled", root)
    assert ctx.data == (root / "data" / "gap",)
    assert (ctx.view, ctx.task_name, ctx.data_root) == ("shuffled", "molp2s/gap", root)
    pdf_ctx = pipeline.load_context(pdf, "dev", pipeline.data_root_for(pdf, {}))
    assert pdf_ctx.params == {"modality": "pdf"}


def test_a_data_path_out_of_the_root_is_refused(gap: Task) -> None:
    spec = gap.spec.model_copy(update={"data": ["../../outside"]})
    task = dataclasses.replace(gap, spec=spec)
    with pytest.raises(BenchregError, match="leads outside the data root"):
        pipeline.load_context(task, None, pipeline.data_root_for(gap, {}))


def test_the_gold_parser_drops_the_degraded_flag(gap: Task) -> None:
    def parse(text: str, sample: Sample) -> Any:
        return Degraded(int(text), "fallback") if text.startswith("0") else int(text)

    task = dataclasses.replace(gap, parser=Bound("p", parse, {}, 2))
    ctx = pipeline.load_context(task, None, pipeline.data_root_for(gap, {}))
    sample = Sample("x", {}, 0)
    assert ctx.parser is not None
    assert ctx.parser("07", sample) == 7
    assert ctx.parser("3", sample) == 3
    no_parser = dataclasses.replace(gap, parser=None)
    assert pipeline.load_context(no_parser, None, Path("/")).parser is None


# --- frozen views and loading -------------------------------------------------------------------


def counting_loader(calls: list[LoadContext], samples: list[Sample]) -> Any:
    def load(ctx: LoadContext) -> Dataset:
        calls.append(ctx)
        return Dataset(list(samples), [])

    return load


def test_guard_frozen(pdf: Task) -> None:
    assert pdf.frozen_views == ["test"]
    with pytest.raises(BenchregError, match="frozen") as info:
        pipeline.guard_frozen(pdf, "test", final=False)
    assert "run.final=true" in str(info.value.fix)
    assert "view=dev" in str(info.value.fix)
    pipeline.guard_frozen(pdf, "test", final=True)
    pipeline.guard_frozen(pdf, "dev", final=False)
    pipeline.guard_frozen(pdf, None, final=False)


def test_a_frozen_view_is_not_read_at_all(pdf: Task) -> None:
    calls: list[LoadContext] = []
    task = dataclasses.replace(
        pdf, loader=Bound("counting", counting_loader(calls, [Sample("a", {}, 0)]))
    )
    root = pipeline.data_root_for(pdf, {})
    with pytest.raises(BenchregError):
        pipeline.load_dataset(task, "test", root)
    assert calls == []
    dataset = pipeline.load_dataset(task, "test", root, final=True)
    assert [s.id for s in dataset.samples] == ["a"]
    assert calls[0].view == "test" and calls[0].params == {}


def test_an_empty_data_set_is_an_error(gap: Task) -> None:
    task = dataclasses.replace(gap, loader=Bound("empty", counting_loader([], [])))
    root = pipeline.data_root_for(gap, {})
    with pytest.raises(BenchregError, match="has no samples") as info:
        pipeline.load_dataset(task, "correct", root)
    assert info.value.where == str(root)


def test_validators_run_with_their_params(gap: Task) -> None:
    def check_size(dataset: Dataset, ctx: LoadContext, *, at_least: int) -> list[Finding]:
        n = len(dataset.samples)
        return [] if n >= at_least else [Finding(ctx.task_name, f"only {n} samples")]

    def always(dataset: Dataset, ctx: LoadContext) -> list[Finding]:
        return [Finding("x", "note", "info")]

    task = dataclasses.replace(
        gap,
        validators=(
            Bound("size", check_size, {"at_least": 5}, 2),
            Bound("always", always, {}, 2),
        ),
    )
    ctx = pipeline.load_context(task, None, pipeline.data_root_for(gap, {}))
    small = Dataset([Sample("a", {}, 0)], [])
    findings = pipeline.run_validators(task, small, ctx)
    assert [str(f) for f in findings] == ["molp2s/gap: only 1 samples", "x: note"]
    big = Dataset([Sample(str(i), {}, 0) for i in range(5)], [])
    assert [f.message for f in pipeline.run_validators(task, big, ctx)] == ["note"]


# --- prompts ----------------------------------------------------------------------------------


def test_template_files_are_the_familys_prompt_files(gap: Task) -> None:
    files = pipeline.template_files(gap, pipeline.data_root_for(gap, {}))
    assert set(files) == {"system", "user"}
    assert files["system"].name == "single_property_system.txt"
    assert all(p.is_file() and p.parent == gap.family_info.prompts_dir for p in files.values())
    assert pipeline.template_files(dataclasses.replace(gap, prompt=None), Path("/")) == {}


def with_templates(task: Task, **templates: str) -> Task:
    assert task.prompt is not None
    return dataclasses.replace(
        task, prompt=BoundPrompt(task.prompt.name, task.prompt.component, templates)
    )


def test_a_missing_template_is_an_error(gap: Task) -> None:
    task = with_templates(gap, system="no_such_template.txt")
    with pytest.raises(BenchregError, match=r"'no_such_template.txt' \(system\) not found"):
        pipeline.template_files(task, pipeline.data_root_for(gap, {}))


def test_a_template_outside_the_prompt_folders_is_refused(gap: Task) -> None:
    task = with_templates(gap, system="../../../../pyproject.toml")
    with pytest.raises(BenchregError, match="leads outside the prompt folders"):
        pipeline.template_files(task, pipeline.data_root_for(gap, {}))


def test_a_releases_own_prompt_wins(pdf: Task, tmp_path: Path) -> None:
    release = tmp_path / "release"
    (release / "prompts").mkdir(parents=True)
    (release / "prompts" / "system.txt").write_text("mine", encoding="utf-8")
    files = pipeline.template_files(pdf, release)
    assert files["system"] == release / "prompts" / "system.txt"
    assert files["user"].parent == pdf.family_info.prompts_dir


def test_render_prompts_reads_the_templates_and_fills_them(gap: Task) -> None:
    root = pipeline.data_root_for(gap, {})
    prepared = pipeline.prepare(gap, view=None, roots={}, options=QUIET, announce=False)
    samples = prepared.samples[:2]
    rendered = pipeline.render_prompts(gap, samples, prepared.view, root)
    assert rendered == prepared.render_prompts(samples)
    assert len(rendered) == 2
    assert [m.role for m in rendered[0]] == ["system", "user"]
    assert all(isinstance(m, Message) for m in rendered[0])
    assert samples[0].id in rendered[0][1].content
    no_prompt = dataclasses.replace(gap, prompt=None)
    assert pipeline.render_prompts(no_prompt, samples, None, root) == [(), ()]


# --- prepare and build_system -----------------------------------------------------------------


def test_prepare_resolves_the_view_and_loads(gap: Task) -> None:
    prepared = pipeline.prepare(gap, view=None, roots={}, options=QUIET, announce=False)
    assert prepared.view == gap.default_view == "correct"
    assert prepared.data_root == gap.family_info.sample_root.resolve()
    assert len(prepared.samples) == len(prepared.dataset.samples) > 3
    assert prepared.dataset.files and all(p.is_file() for p in prepared.dataset.files)
    assert set(prepared.templates) == {"system", "user"}
    files = pipeline.template_files(gap, prepared.data_root)
    assert prepared.templates["user"] == files["user"].read_text("utf-8")
    assert prepared.seconds["load"] >= 0


def test_prepare_applies_the_limit_to_the_samples_only(gap: Task) -> None:
    limited = pipeline.prepare(
        gap, view="shuffled", roots={}, options=RunOptions(limit=3), announce=False
    )
    assert limited.view == "shuffled"
    assert len(limited.samples) == 3
    assert len(limited.dataset.samples) > 3
    assert limited.samples == limited.dataset.samples[:3]


def test_prepare_refuses_an_unknown_view_and_a_frozen_one(gap: Task, pdf: Task) -> None:
    with pytest.raises(BenchregError, match="has no view 'nope'"):
        pipeline.prepare(gap, view="nope", roots={}, options=QUIET)
    with pytest.raises(BenchregError, match="frozen"):
        pipeline.prepare(pdf, view="test", roots={}, options=QUIET)
    final = pipeline.prepare(
        pdf, view="test", roots={}, options=RunOptions(final=True), announce=False
    )
    assert final.view == "test" and final.samples


def test_build_system_builds_the_named_system(gap: Task) -> None:
    prepared = pipeline.prepare(gap, view=None, roots={}, options=QUIET, announce=False)
    system = pipeline.build_system(prepared, {"name": "baseline"})
    assert isinstance(system, PerSampleSystem)
    assert system.name == "baseline:molp2s_rdkit"
    labelled = pipeline.build_system(prepared, {"name": "baseline", "label": "rules"})
    assert isinstance(labelled, Labelled)
    assert (labelled.name, labelled.identity) == ("rules", system.identity)
    with pytest.raises(UnknownComponentError, match="unknown system 'nope'"):
        pipeline.build_system(prepared, {"name": "nope"})
