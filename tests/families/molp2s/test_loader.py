"""Loader rules: each rejection names the file and line (or record) and says how to fix it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from benchreg import BenchregError, load_task
from benchreg.core.load import CACHE_MIN_BYTES, cache_dir, forget
from benchreg.core.pipeline import load_dataset


def load(root: Path, view: str = "correct"):
    return load_dataset(load_task("molp2s/gap"), view, root)


def test_joins_tasks_and_labels(release) -> None:
    dataset = load(release())
    assert [s.id for s in dataset.samples] == [f"r{i}" for i in range(6)]
    assert [s.gold for s in dataset.samples] == [0, 1, 2, 3, 0, 1]
    assert len(dataset.files) == 2


def test_structure_only_uses_correct_records_without_properties(release) -> None:
    root = release()
    correct, structure = load(root, "correct"), load(root, "structure_only")
    assert [s.id for s in structure.samples] == [s.id for s in correct.samples]
    assert [s.gold for s in structure.samples] == [s.gold for s in correct.samples]
    assert all(s.input["properties"] == {} for s in structure.samples)
    assert all(s.input["properties"] for s in correct.samples)


def test_malformed_json_names_file_and_line(release, make_record) -> None:
    root = release(raw_task_lines=[json.dumps(make_record("r0")), "{not json"])
    with pytest.raises(BenchregError, match=r"correct\.jsonl:2: malformed JSON"):
        load(root)


def test_missing_label_is_rejected(release, make_record) -> None:
    root = release(
        records=[make_record("r0"), make_record("r1")], labels=[{"record_id": "r0", "label": 0}]
    )
    with pytest.raises(BenchregError, match=r"have no label, first 'r1'"):
        load(root)


def test_extra_label_is_rejected(release, make_record) -> None:
    root = release(
        records=[make_record("r0")],
        labels=[{"record_id": "r0", "label": 0}, {"record_id": "ghost", "label": 1}],
    )
    with pytest.raises(BenchregError, match=r"labels\.jsonl:2: label for unknown record 'ghost'"):
        load(root)


def test_duplicate_record_id_is_rejected(release, make_record) -> None:
    root = release(records=[make_record("r0"), make_record("r0")])
    with pytest.raises(BenchregError, match=r"correct\.jsonl:2: duplicate record_id 'r0'"):
        load(root)


def test_duplicate_key_in_a_line_is_rejected(release, make_record) -> None:
    line = json.dumps(make_record("r0"))[:-1] + ', "record_id": "r1"}'
    root = release(raw_task_lines=[line], labels=[{"record_id": "r0", "label": 0}])
    with pytest.raises(BenchregError, match=r"correct\.jsonl:1: duplicate key 'record_id'"):
        load(root)


def test_samples_remember_their_line(release, make_record) -> None:
    root = release(
        raw_task_lines=[json.dumps(make_record("r0")), "", json.dumps(make_record("r1"))],
        labels=[{"record_id": "r0", "label": 0}, {"record_id": "r1", "label": 1}],
    )
    assert [s.meta["line"] for s in load(root).samples] == [1, 3]


def test_duplicate_label_is_rejected(release, make_record) -> None:
    root = release(
        records=[make_record("r0")],
        labels=[{"record_id": "r0", "label": 0}, {"record_id": "r0", "label": 1}],
    )
    match = r"labels\.jsonl:2: duplicate record_id 'r0' \(first at .*labels\.jsonl:1\)"
    with pytest.raises(BenchregError, match=match):
        load(root)


@pytest.mark.parametrize("label", [4, -1])
def test_label_out_of_range_is_rejected(release, make_record, label: int) -> None:
    root = release(records=[make_record("r0")], labels=[{"record_id": "r0", "label": label}])
    with pytest.raises(BenchregError, match=r"labels\.jsonl:1: label .* outside its 4 candidates"):
        load(root)


def test_unparseable_candidate_is_rejected(release, make_record) -> None:
    bad = make_record("r0", candidate_completed_smiles=["c1ccccc1CO", "C1CC(("])
    with pytest.raises(BenchregError, match=r"correct\.jsonl:1: record 'r0': candidate 1"):
        load(release(records=[bad]))


def test_unparseable_masked_smiles_is_rejected(release, make_record) -> None:
    bad = make_record("r0", masked_smiles="c1ccc(c1C[*]")
    with pytest.raises(BenchregError, match=r"correct\.jsonl:1: .*does not parse"):
        load(release(records=[bad]))


def test_masked_smiles_without_mask_is_rejected(release, make_record) -> None:
    bad = make_record("r0", masked_smiles="c1ccccc1C", mask={"attachment_points": 1})
    with pytest.raises(BenchregError, match=r"has no mask"):
        load(release(records=[bad]))


@pytest.mark.parametrize(
    ("masked", "mask"),
    [
        ("c1ccccc1C*", {}),
        ("c1ccccc1C[*]", {}),
        ("c1ccccc1C[1*]", {}),
        ("c1ccccc1C<MASK>", {"token": "<MASK>"}),
        ("c1ccccc1C[R]", {"token": "[R]"}),
        ("c1ccccc1C[MASK]", {"mask_token": "[MASK]", "attachment_points": 1}),
        ("c1ccccc1C[MASK]", "[MASK]"),
    ],
)
def test_mask_as_dummy_atom_or_text_token(
    release, make_record, masked: str, mask: dict | str
) -> None:
    dataset = load(
        release(
            records=[make_record("r0", masked_smiles=masked, mask=mask)],
            labels=[{"record_id": "r0", "label": 0}],
        )
    )
    assert dataset.samples[0].input["masked_smiles"] == masked


def test_missing_field_names_the_field(release, make_record) -> None:
    bad = make_record("r0")
    del bad["candidate_completed_smiles"]
    with pytest.raises(BenchregError, match=r"correct\.jsonl:1: candidate_completed_smiles"):
        load(release(records=[bad]))


def test_missing_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "data" / "gap").mkdir(parents=True)
    with pytest.raises(BenchregError, match=r"correct\.jsonl: file not found"):
        load(tmp_path)


def large_release(release, make_record, **over) -> Path:
    """A release whose task file is large enough for the loaded-data cache's disk entries."""
    padding = "x" * (CACHE_MIN_BYTES // 5)
    return release(records=[make_record(f"r{i}", padding=padding, **over) for i in range(6)])


def test_the_loaded_data_cache_answers_a_repeated_run_with_equal_samples(
    release, make_record, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeated load of unchanged files is answered from memory (the same process) or from the
    cache on disk (a new process) with the samples of the first read, and says so; nothing is
    decoded or checked again."""
    from benchreg.families.molp2s import loader as molp2s_loader

    root = large_release(release, make_record)
    calls: list[str] = []
    real = molp2s_loader.smiles_parses
    monkeypatch.setattr(
        molp2s_loader, "smiles_parses", lambda smiles: calls.append(smiles) or real(smiles)
    )
    first = load(root)
    assert (first.info["loaded"], first.info["smiles_checks"]) == ("read", "checked") and calls
    assert first.info["view"] == "correct"
    calls.clear()
    monkeypatch.setattr(molp2s_loader, "index_lines", None)  # a second decode would fail
    again = load(root)
    assert (again.info["loaded"], again.info["smiles_checks"]) == ("memory", "cached")
    forget()  # as a new process starts: only the disk entry is left
    from_disk = load(root)
    assert (from_disk.info["loaded"], from_disk.info["smiles_checks"]) == ("cache", "cached")
    assert not calls
    for other in (again, from_disk):
        assert other.samples == first.samples and other.files == first.files


def test_changed_bytes_or_another_view_are_read_again(release, make_record) -> None:
    root = large_release(release, make_record)
    first = load(root)
    structure = load(root, "structure_only")
    assert structure.info["loaded"] == "read" and structure.samples[0].input["properties"] == {}
    labels = root / "data" / "gap" / "correct.labels.jsonl"
    labels.write_text(labels.read_text().replace('"label": 0', '"label": 3'))
    forget()
    changed = load(root)
    assert changed.info["loaded"] == "read" and changed.info["smiles_checks"] == "checked"
    assert first.samples[0].gold == 0 and changed.samples[0].gold == 3


def test_cache_off_reads_the_files_again(release, make_record) -> None:
    root = large_release(release, make_record)
    first = load(root)
    off = load_dataset(load_task("molp2s/gap"), "correct", root, cache=False)
    assert (off.info["loaded"], off.info["smiles_checks"]) == ("read", "checked")
    assert off.samples == first.samples


def test_smiles_checks_off_are_reported_off(release, make_record) -> None:
    task = load_task("molp2s/gap")
    loader = task.loader.with_params({"check_smiles": False}, what="loader")
    root = release(records=[make_record("r0", candidate_completed_smiles=["C", "not a smiles"])])
    dataset = load_dataset(replace(task, loader=loader), "correct", root)
    assert dataset.info["smiles_checks"] == "off"
    assert dataset.samples[0].input["candidate_completed_smiles"][1] == "not a smiles"


def test_a_file_that_fails_the_smiles_checks_is_never_cached(release, make_record) -> None:
    root = large_release(release, make_record, candidate_completed_smiles=["C", "not a smiles"])
    for _ in range(2):
        with pytest.raises(BenchregError, match="does not parse in RDKit"):
            load(root)
    assert not list((cache_dir() / "loaded").glob("*"))


def _samples_as_documented(root: Path, view: str) -> list:
    """The samples the loader should build, by docs/molp2s.md, from the raw lines."""
    import hashlib

    from benchreg.core.types import Sample

    folder = root / "data" / "gap"
    file_view = "correct" if view == "structure_only" else view
    lines = (folder / f"{file_view}.jsonl").read_text().splitlines()
    labels = {
        (label := json.loads(line))["record_id"]: label["label"]
        for line in (folder / f"{file_view}.labels.jsonl").read_text().splitlines()
    }
    fields = ("record_id", "masked_smiles", "mask", "properties", "candidate_completed_smiles")
    out = []
    for number, line in enumerate(lines, start=1):
        task = json.loads(line)
        mask = {"token": task["mask"]} if isinstance(task["mask"], str) else task["mask"]
        candidates = task["candidate_completed_smiles"]
        scaffold = hashlib.sha1("\n".join([task["masked_smiles"], *candidates]).encode())
        extra = {k: v for k, v in task.items() if k not in fields}
        meta = {
            "directory": "gap",
            "view": view,
            "line": number,
            "n_candidates": len(candidates),
            "scaffold": scaffold.hexdigest()[:16],
        }
        out.append(
            Sample(
                id=task["record_id"],
                input={
                    "record_id": task["record_id"],
                    "masked_smiles": task["masked_smiles"],
                    "mask": mask,
                    "properties": {} if view == "structure_only" else task["properties"],
                    "candidate_completed_smiles": candidates,
                },
                gold=labels[task["record_id"]],
                meta={**meta, **({"extra": extra} if extra else {})},
            )
        )
    return out


@pytest.mark.parametrize("view", ["correct", "structure_only"])
def test_samples_hold_the_records_as_documented(release, make_record, view: str) -> None:
    """Mask shorthands, extra fields (kept in meta, in their order) and key orders alike."""
    records = [
        make_record("r0"),
        make_record("r1", mask="[MASK]", masked_smiles="c1ccccc1C[MASK]"),
        make_record("r2", source="zinc", notes={"k": [1, "x"]}),
        {
            "candidate_completed_smiles": ["CO", "CN", "CC", "CF"],
            "record_id": "r3",
            "properties": {},
            "mask": {"token": "[*]"},
            "masked_smiles": "C[*]",
            "z": None,
        },
        make_record("r4", mask={}, masked_smiles="C*"),
    ]
    root = release(records=records)
    dataset = load(root, view)
    expected = _samples_as_documented(root, view)
    assert dataset.samples == expected
    assert [list(s.input["mask"]) for s in dataset.samples] == [
        list(s.input["mask"]) for s in expected
    ]
    assert [list(s.meta.get("extra", {})) for s in dataset.samples] == [
        list(s.meta.get("extra", {})) for s in expected
    ]


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"record_id": ""}, "a task line needs a non-empty string 'record_id'"),
        ({"masked_smiles": ""}, "masked_smiles: String should have at least 1 character"),
        ({"masked_smiles": 5}, "masked_smiles: Input should be a valid string"),
        ({"mask": 3}, "mask: Input should be a valid dictionary"),
        ({"properties": []}, "properties: Input should be a valid dictionary"),
        ({"candidate_completed_smiles": []}, "candidate_completed_smiles: List should have"),
        ({"candidate_completed_smiles": ["C", 1]}, r"candidate_completed_smiles\.1: Input"),
        (
            {"candidate_completed_smiles": "C"},
            "candidate_completed_smiles: Input should be a valid list",
        ),
    ],
)
def test_a_line_breaking_a_rule_gets_the_models_error(
    release, make_record, over: dict, message: str
) -> None:
    root = release(records=[make_record("r0"), make_record("r1", **over)])
    with pytest.raises(BenchregError, match=rf"correct\.jsonl:2: {message}"):
        load(root)


@pytest.mark.parametrize("label", [True, "1", 1.0, None])
def test_a_label_that_is_not_an_int_gets_the_models_error(release, make_record, label) -> None:
    root = release(records=[make_record("r0")], labels=[{"record_id": "r0", "label": label}])
    with pytest.raises(BenchregError, match=r"labels\.jsonl:1: label: Input should be"):
        load(root)


def test_the_first_smiles_problem_in_file_order_is_reported(release, make_record) -> None:
    root = release(
        records=[
            make_record("r0"),
            make_record("r1", candidate_completed_smiles=["C", "not a smiles"]),
            make_record("r2", masked_smiles="CCO"),
            make_record("r3", candidate_completed_smiles=["C", "not a smiles"]),
        ]
    )
    with pytest.raises(BenchregError, match=r"correct\.jsonl:2: record 'r1': candidate 1"):
        load(root)
