"""Loading a PromptCBLUE folder: splits, gold sources, bad lines, the embedded sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.families.cblue.catalogue import TASK_NAMES, TASKS

from .cblue_helpers import load, row, run_cblue, write_jsonl


def test_embedded_sample_has_16_tasks_with_structured_gold() -> None:
    for task in TASK_NAMES:
        dataset = load(task, None)
        assert 3 <= len(dataset.samples) <= 5
        assert dataset.info["gold_from_structured"] == len(dataset.samples)
        assert not dataset.warnings


def test_view_selects_the_split_file(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "dev.json", [row("d1"), row("d2", target="不相关")])
    write_jsonl(tmp_path / "test.json", [row("t1", target="")])
    assert [s.id for s in load("KUAKE-IR", tmp_path).samples] == ["d1", "d2"]
    test = load("KUAKE-IR", tmp_path, view="test")
    assert [s.id for s in test.samples] == ["t1"]
    assert any("has no gold" in w for w in test.warnings)
    with pytest.raises(BenchregError, match=r"train\.json not found"):
        load("KUAKE-IR", tmp_path, view="train")


def test_rows_of_other_tasks_and_unknown_tasks_are_skipped(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "dev.json",
        [row("a"), row("b", task="Text2DT"), row("c", task="KUAKE-QIC", target="就医建议")],
    )
    assert [s.id for s in load("KUAKE-IR", tmp_path).samples] == ["a"]
    assert load("KUAKE-QIC", tmp_path).samples[0].gold == "就医建议"


def test_structured_gold_wins_and_gaps_fall_back_to_target(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "dev.json", [row("a", target="相关"), row("b", target="相关")])
    (tmp_path / "dev_structured.json").write_text(
        json.dumps({"KUAKE-IR": [{"sample_id": "a", "answer": "不相关"}]}), encoding="utf-8"
    )
    dataset = load("KUAKE-IR", tmp_path)
    assert [s.gold for s in dataset.samples] == ["不相关", "相关"]
    assert dataset.info == {
        "split": "dev",
        "task_dataset": "KUAKE-IR",
        "gold_from_structured": 1,
        "gold_from_target": 1,
    }
    assert any("no gold for 1 KUAKE-IR sample(s) (b)" in w for w in dataset.warnings)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"input": "x"}', r"dev.json:2: line lacks field\(s\) target, task_dataset, sample_id"),
        ("[1, 2]", r"dev.json:2: a PromptCBLUE line must be a JSON object"),
        ("{broken", r"dev.json:2: malformed JSON"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    (tmp_path / "dev.json").write_text(json.dumps(row("a")) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(BenchregError, match=message):
        load("KUAKE-IR", tmp_path)


def test_duplicate_sample_id_is_rejected(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "dev.json", [row("a"), row("a")])
    with pytest.raises(BenchregError, match=r"dev.json:2: duplicate sample_id 'a'"):
        load("KUAKE-IR", tmp_path)


def test_malformed_structured_gold_is_rejected(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "dev.json", [row("a")])
    (tmp_path / "dev_structured.json").write_text(
        json.dumps({"KUAKE-IR": [{"sample_id": "a", "answer": ["相关"]}]}), encoding="utf-8"
    )
    with pytest.raises(BenchregError, match="gold of a \\(KUAKE-IR\\): must be a string"):
        load("KUAKE-IR", tmp_path)


def test_gold_that_cannot_be_parsed_names_the_line(tmp_path: Path) -> None:
    bad = row("a", task="CMeEE-V2", target="疾病实体：x", answer_choices=None)
    write_jsonl(tmp_path / "dev.json", [row("z"), bad])
    with pytest.raises(BenchregError, match=r"dev.json:2: cannot read the gold of a"):
        load("CMeEE-V2", tmp_path)


def test_files_that_are_not_utf8_are_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "dev.json").write_bytes(
        json.dumps(row("a"), ensure_ascii=False).encode("gbk") + b"\n"
    )
    with pytest.raises(BenchregError, match="not UTF-8 text"):
        load("KUAKE-IR", tmp_path)
    write_jsonl(tmp_path / "dev.json", [row("a")])
    predictions = tmp_path / "p.jsonl"
    predictions.write_bytes('{"sample_id": "a", "output": "相关"}\n'.encode("gbk"))
    with pytest.raises(BenchregError, match="predictions file is not UTF-8 text"):
        run_cblue("KUAKE-IR", predictions, tmp_path)


def test_task_comes_from_the_loader_param_only(tmp_path: Path) -> None:
    """The entry names its PromptCBLUE task once (`loader.params.task`), never by entry name."""
    from benchreg import load_task
    from benchreg.core.pipeline import load_dataset

    write_jsonl(tmp_path / "dev.json", [row("a"), row("q", task="KUAKE-QIC", target="就医建议")])
    spec = load_task("cblue/KUAKE-IR")
    renamed = spec.evolve(loader={"name": spec.loader.name, "params": {}})
    with pytest.raises(BenchregError, match="loader param `task`"):
        load_dataset(renamed, "dev", tmp_path)
    other = spec.evolve(loader={"name": spec.loader.name, "params": {"task": "KUAKE-QIC"}})
    dataset = load_dataset(other, "dev", tmp_path)
    assert [(s.id, s.input["task_dataset"]) for s in dataset.samples] == [("q", "KUAKE-QIC")]


def test_samples_and_gold_findings_are_reused_for_the_same_files_and_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's samples (gold, warnings, info) and `cblue_gold`'s findings come back from the
    loaded-data cache equal to those built; another file content or parser builds them anew."""
    from dataclasses import replace

    from benchreg import load_task
    from benchreg.core import checkcache, registry
    from benchreg.core.pipeline import load_context

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    root = tmp_path / "data"
    root.mkdir()
    rows = [row("a", target="相关"), row("b", target="不相关"), row("c", target="相关")]
    write_jsonl(root / "dev.json", rows)
    (root / "dev_structured.json").write_text(
        json.dumps({"KUAKE-IR": [{"sample_id": "a", "answer": "不相关"}]}), encoding="utf-8"
    )
    spec = load_task("cblue/KUAKE-IR")
    check = registry.validators.get("cblue_gold")

    def loaded() -> tuple:
        dataset = load("KUAKE-IR", root)
        findings = check(dataset, load_context(spec, "dev", root))
        return dataset, [(f.where, f.message, f.severity) for f in findings]

    built, built_findings = loaded()
    assert built.info.get("samples") is None and built_findings  # "a" disagrees with its target
    again, again_findings = loaded()
    assert again.info == {**built.info, "samples": "cached"}
    assert (again.samples, again.files, again.warnings) == (
        built.samples,
        built.files,
        built.warnings,
    )
    assert again_findings == built_findings

    ctx = load_context(spec, "dev", root)
    other = replace(spec, parser=replace(spec.parser, params={"unused": 1}))
    assert load_context(other, "dev", root).parser_ref != ctx.parser_ref
    assert spec.loader.component(replace(ctx, parser_ref="another")).info.get("samples") is None
    assert spec.loader.component(ctx).info["samples"] == "cached"

    write_jsonl(root / "dev.json", [*rows[:2], row("c", target="不相关")])  # c's gold changes
    changed, _ = loaded()
    assert changed.info.get("samples") is None
    assert [s.gold for s in changed.samples] == ["不相关", "不相关", "不相关"]


def _copies_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh cache folder, and every file large enough for the copies of task_parts."""
    from benchreg.core import checkcache, partload

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    assert partload.forking(), "a thread is running: no copy would be forked"


def _split_with_structured_gold(root: Path) -> None:
    root.mkdir()
    rows = [
        row("a", target="相关"),
        row("q", task="KUAKE-QIC", target="就医建议"),
        row("b", target="不相关"),
        row("t", task="Text2DT"),
        row("e", task="CMeIE-V2", target="没有关系", answer_choices=None),
    ]
    write_jsonl(root / "dev.json", rows)
    gold = {
        "KUAKE-IR": [{"sample_id": "a", "answer": "不相关"}],
        "CMeIE-V2": [{"sample_id": "e", "answer": []}],
    }
    (root / "dev_structured.json").write_text(json.dumps(gold), encoding="utf-8")


def _loaded(task: str, root: Path) -> tuple:
    dataset = load(task, root)
    return dataset.samples, dataset.files, dataset.warnings, dataset.info


def test_split_and_gold_read_by_forked_copies_give_the_one_process_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first load of a task has both files decoded by forked copies, which keep every task's
    part in the loaded-data cache, while this process does the work offered for the wait; the
    samples equal those read in one process, and the next task's load reads its parts without
    another copy."""
    from benchreg.core import idle, partload
    from benchreg.families.cblue import loader

    root = tmp_path / "data"
    _split_with_structured_gold(root)
    monkeypatch.setenv("BENCHREG_VALIDATION_CACHE", "off")
    one_process = {task: _loaded(task, root) for task in ("KUAKE-IR", "KUAKE-QIC", "CMeIE")}
    monkeypatch.delenv("BENCHREG_VALIDATION_CACHE")
    _copies_on(tmp_path, monkeypatch)
    copies: list[str] = []
    fork_copy = partload.fork_copy
    monkeypatch.setattr(
        partload, "fork_copy", lambda work, log: copies.append(log.stem) or fork_copy(work, log)
    )
    waited: list[str] = []  # what a run offers to do while its data loads (core.idle)
    with idle.offered(lambda: waited.append("done while the copies ran")):
        assert _loaded("KUAKE-IR", root) == one_process["KUAKE-IR"]
    split, gold = loader.SPLIT_ROWS, loader.STRUCTURED_GOLD
    assert sorted(copies) == sorted([f"{split}.0", f"{split}.1", f"{gold}.0"])  # split in halves
    assert waited == ["done while the copies ran"]
    for kind in (split, gold):
        for task in TASK_NAMES:
            path = root / ("dev.json" if kind == split else "dev_structured.json")
            part = loader._kept_part(kind, path, TASKS[task])
            assert part is not None, (kind, task)
    with idle.offered(lambda: waited.append("no copy, no wait")):
        assert _loaded("KUAKE-QIC", root) == one_process["KUAKE-QIC"]
    assert waited == ["done while the copies ran"]
    assert _loaded("CMeIE", root) == one_process["CMeIE"]  # named CMeIE-V2 in both files
    assert len(copies) == 3


def test_a_bad_line_found_by_a_copy_is_reported_from_the_loading_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchreg.families.cblue import loader

    _copies_on(tmp_path, monkeypatch)
    (tmp_path / "dev.json").write_text(json.dumps(row("a")) + '\n{"input": "x"}\n', "utf-8")
    with pytest.raises(BenchregError, match=r"dev.json:2: line lacks field"):
        load("KUAKE-IR", tmp_path)
    kept = loader._kept_part(loader.SPLIT_ROWS, tmp_path / "dev.json", TASKS["KUAKE-IR"])
    assert kept is None


def test_a_copy_that_fails_leaves_the_files_to_the_loading_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchreg.families.cblue import loader

    root = tmp_path / "data"
    _split_with_structured_gold(root)
    expected = _loaded("KUAKE-IR", root)
    _copies_on(tmp_path, monkeypatch)

    def dies(*args: object) -> tuple[int, None]:
        raise MemoryError  # in the copy: it exits with 1, writing nothing

    monkeypatch.setattr(loader, "_keep_gold_parts", dies)
    monkeypatch.setattr(loader, "_keep_split_half", dies)
    tried = len(loader._TRIED)
    assert _loaded("KUAKE-IR", root) == expected
    assert len(loader._TRIED) == tried + 2  # not tried again for these files in this process
    assert loader._kept_part(loader.SPLIT_ROWS, root / "dev.json", TASKS["KUAKE-IR"]) is None


def test_predictions_read_while_the_copies_run_give_the_same_run_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run offers its predictions file's decoding for the wait (core.idle): the scores are
    those of a run without copies, and a file that is not JSON is still one clear error."""
    from benchreg.core import idle

    root = tmp_path / "data"
    _split_with_structured_gold(root)
    good = tmp_path / "good.jsonl"
    write_jsonl(good, [{"sample_id": "a", "output": "不相关"}, {"sample_id": "b", "output": "x"}])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    monkeypatch.setenv("BENCHREG_VALIDATION_CACHE", "off")
    expected = run_cblue("KUAKE-IR", good, root).metrics
    with pytest.raises(BenchregError, match=r"bad.jsonl:1: malformed JSON"):
        run_cblue("KUAKE-IR", bad, root)

    monkeypatch.delenv("BENCHREG_VALIDATION_CACHE")
    _copies_on(tmp_path, monkeypatch)
    ran: list[str] = []
    run_offered = idle.run_offered
    monkeypatch.setattr(idle, "run_offered", lambda: ran.append("waited") or run_offered())
    with pytest.raises(BenchregError, match=r"bad.jsonl:1: malformed JSON"):
        run_cblue("KUAKE-IR", bad, root)
    assert ran == ["waited"]
    other = tmp_path / "other"  # files not seen before: copies again
    _split_with_structured_gold(other)
    assert run_cblue("KUAKE-IR", good, other).metrics == expected
    assert ran == ["waited", "waited"]
