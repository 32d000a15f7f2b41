"""Loader rules: each rejection names the file and line (or record) and says how to fix it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg import BenchregError, load_task
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


def test_smiles_checks_are_cached_by_the_file_sha256(
    release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeated load of an unchanged file skips the RDKit checks and says so; a changed file
    (or a file that failed) is checked again."""
    from benchreg.families.molp2s import loader as molp2s_loader

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    root = release()
    calls: list[str] = []
    real = molp2s_loader.smiles_parses
    monkeypatch.setattr(
        molp2s_loader, "smiles_parses", lambda smiles: calls.append(smiles) or real(smiles)
    )
    first = load(root)
    assert first.info["smiles_checks"] == "checked" and calls
    calls.clear()
    again = load(root)
    assert again.info["smiles_checks"] == "cached" and not calls
    assert [s.input for s in again.samples] == [s.input for s in first.samples]
    assert list((tmp_path / "cache" / "validated").rglob("*.json"))
    monkeypatch.setenv("BENCHREG_VALIDATION_CACHE", "off")
    assert load(root).info["smiles_checks"] == "checked" and calls


def test_a_file_that_fails_the_smiles_checks_is_never_cached(
    release, make_record, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    root = release(records=[make_record("r0", candidate_completed_smiles=["C", "not a smiles"])])
    for _ in range(2):
        with pytest.raises(BenchregError, match="does not parse in RDKit"):
            load(root)
    assert not (tmp_path / "cache").exists()


def test_large_files_reuse_the_loaded_samples(
    release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the size threshold a repeated load of unchanged files reads the samples back from
    the loaded-data cache (same samples, no decoding, checks reported as cached); a changed file
    or view is loaded again."""
    from benchreg.core import checkcache, types
    from benchreg.families.molp2s import loader as molp2s_loader

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    root = release()
    first = load(root)
    assert first.info["smiles_checks"] == "checked"
    monkeypatch.setattr(molp2s_loader, "index_lines", None)  # a second decode would fail
    again = load(root)
    assert again.info["smiles_checks"] == "cached"
    # the inputs stay encoded until read; an index answer's range needs only the lengths
    held = [types._HELD_INPUT.__get__(s, types.Sample) for s in again.samples]
    assert {type(h) for h in held} == {types.DeferredInput}
    lengths = [s.length_of("candidate_completed_smiles") for s in again.samples]
    assert all(
        type(types._HELD_INPUT.__get__(s, types.Sample)) is types.DeferredInput
        for s in again.samples
    )
    assert lengths == [len(s.input["candidate_completed_smiles"]) for s in first.samples]
    assert again.samples == first.samples and again.files == first.files
    monkeypatch.undo()
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    other = load(root, "structure_only")
    assert other.samples[0].input["properties"] == {}
    labels = root / "data" / "gap" / "correct.labels.jsonl"
    labels.write_text(labels.read_text().replace('"label": 0', '"label": 3'))
    changed = load(root)
    assert changed.samples[0].gold == 3  # loaded again (the tasks file kept its SMILES checks)


def test_loaded_cache_stores_each_string_once_and_gives_back_equal_values() -> None:
    import json
    import marshal

    from benchreg.core.checkcache import shared_strings

    line = '{"unit": "nm", "bands": [{"unit": "nm", "x": 1.5}], "t": ["a", null]}'
    rows = [(f"r{i}", json.loads(line), i) for i in range(50)]  # each a decoded record
    before = marshal.dumps(rows)
    shared = shared_strings(rows)
    assert shared == [(f"r{i}", json.loads(line), i) for i in range(50)]  # equal values
    assert shared[0][1] is rows[0][1] and shared[0][1] is not shared[1][1]  # same dicts
    back = marshal.loads(marshal.dumps(shared))
    assert back == shared
    assert back[0][1]["bands"][0]["unit"] is back[1][1]["unit"]  # one string object
    assert list(back[0][1]) == ["unit", "bands", "t"]  # key order kept
    assert len(marshal.dumps(shared)) < len(before)


def _samples_as_pydantic_builds_them(root: Path, view: str) -> list:
    """The samples as the loader built them from :class:`TaskLine` / :class:`LabelLine`
    instances (its former path, kept here as the reference)."""
    import hashlib

    from benchreg.core.types import Sample
    from benchreg.families.molp2s.records import LabelLine, TaskLine

    folder = root / "data" / "gap"
    file_view = "correct" if view == "structure_only" else view
    lines = (folder / f"{file_view}.jsonl").read_text().splitlines()
    labels = {
        (label := LabelLine.model_validate_json(line)).record_id: label.label
        for line in (folder / f"{file_view}.labels.jsonl").read_text().splitlines()
    }
    out = []
    for number, line in enumerate(lines, start=1):
        task = TaskLine.model_validate_json(line)
        candidates = list(task.candidate_completed_smiles)
        scaffold = hashlib.sha1("\n".join([task.masked_smiles, *candidates]).encode()).hexdigest()
        extra = dict(task.model_extra or {})
        meta = {
            "directory": "gap",
            "view": view,
            "line": number,
            "n_candidates": len(candidates),
            "scaffold": scaffold[:16],
        }
        out.append(
            Sample(
                id=task.record_id,
                input={
                    "record_id": task.record_id,
                    "masked_smiles": task.masked_smiles,
                    "mask": task.mask,
                    "properties": {} if view == "structure_only" else task.properties,
                    "candidate_completed_smiles": candidates,
                },
                gold=labels[task.record_id],
                meta={**meta, **({"extra": extra} if extra else {})},
            )
        )
    return out


@pytest.mark.parametrize("view", ["correct", "structure_only"])
def test_samples_equal_what_the_record_models_give(release, make_record, view: str) -> None:
    """The loader takes plainly valid lines without a pydantic instance each: its samples are
    those the models give, for mask shorthands, extra fields and key orders alike."""
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
    assert dataset.samples == _samples_as_pydantic_builds_them(root, view)
    assert [list(s.input["mask"]) for s in dataset.samples] == [
        list(s.input["mask"]) for s in _samples_as_pydantic_builds_them(root, view)
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
def test_a_line_the_plain_check_refuses_gets_the_models_error(
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
