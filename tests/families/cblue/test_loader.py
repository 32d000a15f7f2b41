"""Loading a PromptCBLUE folder: splits, gold sources, bad lines, the embedded sample."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.errors import BenchregError
from benchreg.families.cblue.catalogue import TASK_NAMES

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
        "loaded": "read",
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


def _padded(root: Path, rows: list[dict]) -> None:
    """``rows`` as root/dev.json, made large enough for the loaded-data cache on disk by an
    extra field (fields beyond the six are allowed and not read)."""
    from benchreg.core.load import CACHE_MIN_BYTES

    write_jsonl(root / "dev.json", [{**rows[0], "note": "x" * CACHE_MIN_BYTES}, *rows[1:]])


def test_samples_and_gold_findings_are_reused_for_the_same_files_and_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's samples (gold, warnings, info) and `cblue_gold`'s findings come back from the
    loading door (this process's memory, then the cache on disk) equal to those built; another
    file content or parser builds them anew."""
    from dataclasses import replace

    from benchreg import load_task
    from benchreg.core import registry
    from benchreg.core.load import forget
    from benchreg.core.pipeline import load_context

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "data"
    root.mkdir()
    rows = [row("a", target="相关"), row("b", target="不相关"), row("c", target="相关")]
    _padded(root, rows)
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
    assert built.info["loaded"] == "read" and built_findings  # "a" disagrees with its target
    for source in ("memory", "cache"):
        if source == "cache":
            forget()  # a sweep's end: the next run reads the cache on disk
        again, again_findings = loaded()
        assert again.info == {**built.info, "loaded": source}
        assert (again.samples, again.files, again.warnings) == (
            built.samples,
            built.files,
            built.warnings,
        )
        assert again_findings == built_findings

    ctx = load_context(spec, "dev", root)
    other = replace(spec, parser=replace(spec.parser, params={"unused": 1}))
    assert load_context(other, "dev", root).parser_ref != ctx.parser_ref
    assert spec.loader.component(replace(ctx, parser_ref="another")).info["loaded"] == "read"
    assert spec.loader.component(replace(ctx, cache=False)).info["loaded"] == "read"
    assert spec.loader.component(ctx).info["loaded"] in ("memory", "cache")  # not read again

    _padded(root, [*rows[:2], row("c", target="不相关")])  # c's gold changes
    changed, _ = loaded()
    assert changed.info["loaded"] == "read"
    assert [s.gold for s in changed.samples] == ["不相关", "不相关", "不相关"]


def _split_with_structured_gold(root: Path, *, padded: bool = False) -> None:
    root.mkdir()
    rows = [
        row("a", target="相关"),
        row("q", task="KUAKE-QIC", target="就医建议"),
        row("b", target="不相关"),
        row("t", task="Text2DT"),
        row("e", task="CMeIE-V2", target="没有关系", answer_choices=None),
    ]
    _padded(root, rows) if padded else write_jsonl(root / "dev.json", rows)
    gold = {
        "KUAKE-IR": [{"sample_id": "a", "answer": "不相关"}],
        "CMeIE-V2": [{"sample_id": "e", "answer": []}],
    }
    (root / "dev_structured.json").write_text(json.dumps(gold), encoding="utf-8")


def _loaded(task: str, root: Path) -> tuple:
    dataset = load(task, root)
    info = {k: v for k, v in dataset.info.items() if k != "loaded"}
    return dataset.samples, dataset.files, dataset.warnings, info


def test_one_read_of_the_split_and_gold_files_serves_every_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The split and gold files are read once for all tasks (kept by the loading door for the
    next task); each task's samples equal those read with the cache off, CMeIE-V2 in both
    files read as CMeIE and Text2DT ignored."""
    from benchreg.core.load import forget
    from benchreg.families.cblue import gold, split

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "data"
    _split_with_structured_gold(root, padded=True)
    monkeypatch.setenv("BENCHREG_DATA_CACHE", "off")
    one_by_one = {task: _loaded(task, root) for task in ("KUAKE-IR", "KUAKE-QIC", "CMeIE")}
    monkeypatch.delenv("BENCHREG_DATA_CACHE")
    reads: list[str] = []

    def counted(read: Callable[[Path], Any]) -> Callable[[Path], Any]:
        return lambda path: reads.append(path.name) or read(path)

    monkeypatch.setattr(split, "rows_by_task", counted(split.rows_by_task))
    monkeypatch.setattr(gold, "read_structured", counted(gold.read_structured))
    for task in ("KUAKE-IR", "KUAKE-QIC", "CMeIE"):
        assert _loaded(task, root) == one_by_one[task]
    assert sorted(reads) == ["dev.json", "dev_structured.json"]
    forget()
    assert _loaded("CMeIE", root) == one_by_one["CMeIE"]  # from the cache on disk
    assert len(reads) == 2


def test_a_bad_line_of_a_large_file_is_reported_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A problem in a file is never kept: every load reports it at its file:line."""
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    _padded(tmp_path, [row("a"), {"input": "x"}])
    for _ in range(2):
        with pytest.raises(BenchregError, match=r"dev.json:2: line lacks field"):
            load("KUAKE-IR", tmp_path)


def test_predictions_read_again_give_the_same_run_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A predictions file read once for several jobs (the loading door): the scores are those
    of a run with the cache off, and a file that is not JSON is still one clear error."""
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "data"
    _split_with_structured_gold(root)
    good = tmp_path / "good.jsonl"
    write_jsonl(good, [{"sample_id": "a", "output": "不相关"}, {"sample_id": "b", "output": "x"}])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    monkeypatch.setenv("BENCHREG_DATA_CACHE", "off")
    expected = run_cblue("KUAKE-IR", good, root).metrics
    with pytest.raises(BenchregError, match=r"bad.jsonl:1: malformed JSON"):
        run_cblue("KUAKE-IR", bad, root)
    monkeypatch.delenv("BENCHREG_DATA_CACHE")
    for _ in range(2):
        with pytest.raises(BenchregError, match=r"bad.jsonl:1: malformed JSON"):
            run_cblue("KUAKE-IR", bad, root)
        assert run_cblue("KUAKE-IR", good, root).metrics == expected
