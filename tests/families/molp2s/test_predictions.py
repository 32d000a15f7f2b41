"""The prediction reader and the spec's scoring rules, one test each: missing, invalid, out of
range, duplicates, unknown ids, text output, malformed lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg import BenchregError, load_task, run_task
from benchreg.core.result import RunResult


def score(
    root: Path, lines: list[dict] | list[str], tmp_path: Path, view: str = "correct"
) -> RunResult:
    path = tmp_path / "pred.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return run_task(
        load_task("molp2s/gap"),
        view=view,
        system_cfg={"name": "predictions", "path": str(path)},
        roots={"molp2s": str(root)},
    )


def statuses(**nonzero: int) -> dict[str, int]:
    return {"ok": 0, "missing": 0, "invalid": 0, "out_of_range": 0, "error": 0, **nonzero}


def test_all_correct(release, tmp_path: Path) -> None:
    lines = [{"record_id": f"r{i}", "selected_candidate_index": i % 4} for i in range(6)]
    result = score(release(), lines, tmp_path)
    assert result.metrics["accuracy"].value == 1.0
    assert result.counts == {"hits": 6, "tasks": 6}
    assert result.statuses == statuses(ok=6)


def test_missing_record_is_incorrect_and_counted(release, tmp_path: Path) -> None:
    lines = [{"record_id": f"r{i}", "selected_candidate_index": i % 4} for i in range(4)]
    result = score(release(), lines, tmp_path)
    assert result.statuses["missing"] == 2
    assert result.metrics["accuracy"].value == pytest.approx(4 / 6)
    assert result.metrics["accuracy"].denominator == 6


def test_invalid_line_is_incorrect_and_counted(release, tmp_path: Path) -> None:
    lines = [{"record_id": "r0", "invalid": True}] + [
        {"record_id": f"r{i}", "selected_candidate_index": i % 4} for i in range(1, 6)
    ]
    result = score(release(), lines, tmp_path)
    assert result.statuses["invalid"] == 1
    assert result.counts["hits"] == 5


@pytest.mark.parametrize("bad", [4, -1, 99])
def test_out_of_range_index_is_incorrect_and_counted(release, tmp_path: Path, bad: int) -> None:
    lines = [{"record_id": "r0", "selected_candidate_index": bad}]
    result = score(release(), lines, tmp_path)
    assert result.counts == {"hits": 0, "tasks": 6}
    assert result.statuses == statuses(missing=5, out_of_range=1)


@pytest.mark.parametrize("bad", ["0", 1.5, True, None])
def test_wrong_typed_index_is_invalid(release, tmp_path: Path, bad: object) -> None:
    lines = [{"record_id": "r0", "selected_candidate_index": bad}]
    result = score(release(), lines, tmp_path)
    assert result.statuses["invalid"] == 1
    assert result.counts["hits"] == 0


def test_duplicate_record_id_rejects_the_file(release, tmp_path: Path) -> None:
    lines = [
        {"record_id": "r0", "selected_candidate_index": 0},
        {"record_id": "r1", "selected_candidate_index": 1},
        {"record_id": "r0", "selected_candidate_index": 1},
    ]
    with pytest.raises(
        BenchregError, match=r"pred\.jsonl:3: duplicate prediction for 'r0' \(first at .*:1\)"
    ):
        score(release(), lines, tmp_path)


def test_unknown_record_is_ignored_not_scored(release, tmp_path: Path) -> None:
    lines = [
        {"record_id": "ghost", "selected_candidate_index": 0},
        {"record_id": "r0", "selected_candidate_index": 0},
    ]
    result = score(release(), lines, tmp_path)
    assert result.system_report.unknown_ids == ["ghost"]
    assert result.statuses["missing"] == 5


def test_a_file_for_other_records_only_stops_with_a_hint(release, tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match=r"none of the 6 samples .* another split or task"):
        score(release(), [{"record_id": "ghost", "selected_candidate_index": 0}], tmp_path)


def test_text_output_is_parsed(release, tmp_path: Path) -> None:
    text = 'Reasoning first.\n```json\n{"record_id": "r1", "selected_candidate_index": 1}\n```'
    lines = [{"record_id": "r1", "output": text}, {"record_id": "r2", "output": "no idea"}]
    result = score(release(), lines, tmp_path)
    by_id = {p.sample_id: p for p in result.predictions}
    assert by_id["r1"].answer == 1 and by_id["r1"].status == "ok"
    assert by_id["r2"].status == "invalid"


@pytest.mark.parametrize(
    "bad", ["[1, 2]", "{not json", '{"selected_candidate_index": 0}', '{"record_id": 7}']
)
def test_malformed_line_is_counted_not_fatal(release, tmp_path: Path, bad: str) -> None:
    good = [json.dumps({"record_id": f"r{i}", "selected_candidate_index": i % 4}) for i in (1, 2)]
    result = score(release(), [good[0], bad, good[1]], tmp_path)
    assert result.counts == {"hits": 2, "tasks": 6}
    assert result.statuses == statuses(ok=2, missing=4)  # r0 stays missing
    notes = result.system_report.notes
    assert any("1 malformed entr" in n and n.endswith("pred.jsonl:2") for n in notes), notes


TRICKY_LINES = [
    '{"record_id": "r0", "selected_candidate_index": 1}',
    "",
    "   ",
    ' {"record_id": "r1", "selected_candidate_index": 2} ',  # surrounding spaces
    '{"record_id": "r2", "selected_candidate_index": 0, "record_id": "r9"}',  # repeated key
    '{"record_id": "r3", "reasoning": "a: b", "selected_candidate_index": 3}',  # colon in text
    '{"record_id": "r4", "x": {"a": 1, "a": 2}}',  # repeated key in a nested object
    '{"record_id": "r5"} {"record_id": "r6"}',  # extra data
    '{"record_id": "r5", ',  # cut
    "[1, 2]",
    '[{"a": 1}]',
    "3",
    "NaN",
    "\ufeff{}",
    '"text"',
    "[1, 2",
]


def test_lenient_line_reading_equals_the_json_path(tmp_path: Path) -> None:
    """`json_lines(lenient=True)`, as the predictions reader uses it, gives line for line what
    the standard library's `json` (a repeated key refused) gives: the value, or an error."""
    from benchreg.core.reader import json_lines, strict_object

    def by_json(line: str) -> tuple[str, bool]:
        try:
            return repr(json.loads(line, object_pairs_hook=strict_object)), True
        except ValueError:
            return "None", False

    path = tmp_path / "pred.jsonl"
    good = [line for line in TRICKY_LINES[:4] if "record_id" in line]
    for lines, bad in ((TRICKY_LINES, 6), (good, 0)):
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        read = list(json_lines(path, lenient=True))
        expected = [
            (number, *by_json(line)) for number, line in enumerate(lines, start=1) if line.strip()
        ]
        assert [(n, repr(v), e is None) for n, v, e in read] == expected
        assert sum(error is not None for _, _, error in read) == bad


def test_duplicate_names_both_lines(release, tmp_path: Path) -> None:
    lines = [{"record_id": "r0", "selected_candidate_index": 1}] * 2
    with pytest.raises(BenchregError) as info:
        score(release(), lines, tmp_path)
    assert f"first at {tmp_path / 'pred.jsonl'}:1" in info.value.message
    assert str(info.value.where).endswith("pred.jsonl:2")


@pytest.mark.parametrize(
    ("lines", "malformed"), [(TRICKY_LINES, 11), (TRICKY_LINES[:1] + TRICKY_LINES[3:4], 0)]
)
def test_the_reader_takes_the_good_lines_and_lists_the_others(
    release, tmp_path: Path, lines: list[str], malformed: int
) -> None:
    """Lines that decode to an object with a string record_id are predictions; every other
    non-blank line is listed as malformed at its file:line."""
    from benchreg.core.pipeline import load_dataset
    from benchreg.families.molp2s.predictions import read_predictions

    samples = load_dataset(load_task("molp2s/gap"), "correct", release()).samples
    path = tmp_path / "pred.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = read_predictions(path, samples, "molp2s/gap")
    answers = {rid: p.answer for rid, p in read.by_id.items()}
    assert answers == ({"r0": 1, "r1": 2, "r3": 3} if malformed else {"r0": 1, "r1": 2})
    listed = [n for n in read.notes if "malformed" in n]
    if malformed:
        assert len(listed) == 1 and f"{malformed} malformed" in listed[0]
        assert listed[0].endswith(f"{path}:16") and f"{path}:5," in listed[0]
    else:
        assert not listed
    assert read.unknown_ids == []


@pytest.mark.parametrize("system", ["predictions", "baseline"])
def test_a_run_on_samples_read_back_from_the_cache_equals_a_run_on_loaded_ones(
    release, tmp_path: Path, system: str
) -> None:
    """A run on samples read back from the loaded-data cache (a new process's repeated run)
    scores as a run on freshly loaded samples, out-of-range answers included."""
    from benchreg.core.load import CACHE_MIN_BYTES, forget
    from tests.families.molp2s.conftest import record

    padding = "x" * (CACHE_MIN_BYTES // 5)  # large enough for the cache's disk entries
    root = release(records=[record(f"r{i}", padding=padding) for i in range(6)])
    path = tmp_path / "pred.jsonl"
    path.write_text(
        "".join(
            json.dumps({"record_id": f"r{i}", "selected_candidate_index": i}) + "\n"
            for i in range(6)
        ),
        encoding="utf-8",
    )
    cfg = {"name": system, "path": str(path)} if system == "predictions" else {"name": system}

    def run() -> RunResult:
        return run_task(load_task("molp2s/gap"), system_cfg=cfg, roots={"molp2s": str(root)})

    first = run()
    assert first.dataset.info["loaded"] == "read"
    forget()
    again = run()
    assert again.dataset.info["loaded"] == "cache"
    assert again.dataset.info["smiles_checks"] == "cached"
    assert again.samples == first.samples
    assert again.predictions == first.predictions
    assert {k: list(v) for k, v in again.per_sample.items()} == {
        k: list(v) for k, v in first.per_sample.items()
    }
    assert again.metrics["accuracy"] == first.metrics["accuracy"]
    if system == "predictions":
        assert again.statuses == first.statuses and again.statuses["out_of_range"] > 0
