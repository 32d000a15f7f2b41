"""The MolP2S record rules, from the spec (../shared/specs/003, "Task"; docs/molp2s.md), against
the real loader.

A task line is an object with `record_id`, `masked_smiles`, `mask` (metadata: an object, or its
token as a bare string), `properties` (an object) and `candidate_completed_smiles` (a list of
SMILES); other fields are kept as metadata. A label line has `record_id` and `label`, the 0-based
index of the target candidate (an integer, not a bool or a float). Every record has one label.
The records here are generated from those sentences, not from the pydantic types in records.py:
every record they allow must load, and a record changed at one field to break one rule must be
rejected with an error naming its file:line. The SMILES come from the embedded sample (RDKit
accepts them); the other fields vary freely. Each rule's boundary is an explicit example.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchreg import BenchregError, load_task
from benchreg.core.errors import at
from benchreg.core.pipeline import load_dataset
from tests.strategies import json_values

SAMPLE = Path(__file__).resolve().parents[3] / "benchreg" / "families" / "molp2s" / "sample"
TASK_FIELDS = ("record_id", "masked_smiles", "mask", "properties", "candidate_completed_smiles")
LABEL_FIELDS = ("record_id", "label")
TEXT_TOKENS = ("<MASK>", "[MASK]", "[R]")  # a mask token the mask metadata must name


def _sample_smiles() -> tuple[list[tuple[str, str]], list[str]]:
    """(masked SMILES, its mask token) pairs and completed SMILES of the embedded sample."""
    masked: set[tuple[str, str]] = set()
    candidates: set[str] = set()
    for path in sorted((SAMPLE / "data").glob("*/*.jsonl")):
        if path.name.endswith(".labels.jsonl"):
            continue
        for line in path.read_text("utf-8").splitlines():
            record = json.loads(line)
            masked.add((record["masked_smiles"], record["mask"]["token"]))
            candidates.update(record["candidate_completed_smiles"])
    return sorted(masked), sorted(candidates)


MASKED, CANDIDATES = _sample_smiles()
DUMMY_MASKED = [m for m, token in MASKED if token in ("[*]", "*")]

# mask metadata besides its token: no strings (a string value of the mask may name its token)
mask_extras = st.dictionaries(
    st.text(min_size=1, max_size=6).filter(lambda k: k not in ("token", "mask_token")),
    st.none() | st.booleans() | st.integers(0, 9) | st.lists(st.integers(0, 9), max_size=2),
    max_size=2,
)
ids = st.text(min_size=1, max_size=8)


def extras(fields: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(
        st.text(min_size=1, max_size=6).filter(lambda k: k not in fields), json_values, max_size=2
    )


@st.composite
def masked_and_mask(draw: st.DrawFn) -> tuple[str, Any]:
    """A masked SMILES and its mask: a dummy atom (any metadata, even none), or a text token
    named by `mask.token`, by another string field of `mask`, or by `mask` itself."""
    if draw(st.booleans()):
        return draw(st.sampled_from(DUMMY_MASKED)), draw(
            st.sampled_from(["[*]", "*"]) | mask_extras
        )
    masked = draw(st.sampled_from(DUMMY_MASKED))
    token = draw(st.sampled_from(TEXT_TOKENS))
    masked = masked.replace("[*]", token, 1)
    how = draw(st.sampled_from(["token", "other field", "bare"]))
    if how == "bare":
        return masked, token
    key = "token" if how == "token" else "mask_token"
    return masked, {key: token, **draw(mask_extras)}


@st.composite
def releases(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Task lines and label lines (labels in any order) that the spec allows."""
    record_ids = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    tasks, labels = [], []
    for rid in record_ids:
        masked, mask = draw(masked_and_mask())
        candidates = draw(st.lists(st.sampled_from(CANDIDATES), min_size=1, max_size=8))
        properties = draw(st.dictionaries(st.text(max_size=8), json_values, max_size=3))
        tasks.append(
            {
                "record_id": rid,
                "masked_smiles": masked,
                "mask": mask,
                "properties": properties,
                "candidate_completed_smiles": candidates,
                **draw(extras(TASK_FIELDS)),
            }
        )
        label = draw(st.integers(0, len(candidates) - 1))
        labels.append({"record_id": rid, "label": label, **draw(extras(LABEL_FIELDS))})
    return tasks, draw(st.permutations(labels))


def task(rid: str = "a", **over: Any) -> dict[str, Any]:
    base = {
        "record_id": rid,
        "masked_smiles": "*",
        "mask": {},
        "properties": {},
        "candidate_completed_smiles": ["C"],
    }
    return {**base, **over}


NINE_CANDIDATES = [
    *("Cc1ccccc1", "Oc1ccccc1", "Nc1ccccc1", "Fc1ccccc1", "Clc1ccccc1"),
    *("CCc1ccccc1", "COc1ccccc1", "C#Cc1ccccc1", "C=Cc1ccccc1"),
]
ONE = ([task()], [{"record_id": "a", "label": 0}])  # every string and list at its shortest
MANY = (
    [
        task(
            "mp2s-0001 é",
            masked_smiles="[MASK]c1ccccc1",
            mask="[MASK]",
            properties={"gap": {"value": 6.5, "unit": "eV"}, "dipole": 1.2, "nmr": [1, None]},
            candidate_completed_smiles=NINE_CANDIDATES,
            source="zinc",
            note=None,
        ),
        task(
            "2",
            masked_smiles="<MASK>CC",
            mask={"mask_token": "<MASK>", "attachment_points": 1},
            properties={"x": None},
            candidate_completed_smiles=["CCC", "CCC"],
        ),
        task("3", mask={"token": "[*]", "attachment_points": 1}, masked_smiles="[*]CC"),
    ],
    [
        {"record_id": "2", "label": 1, "checked_by": None},
        {"record_id": "mp2s-0001 é", "label": 8},
        {"record_id": "3", "label": 0},
    ],
)


def write(folder: Path, tasks: list[Any], labels: list[Any]) -> Path:
    data = folder / "data" / "gap"
    data.mkdir(parents=True)
    for name, lines in (("correct.jsonl", tasks), ("correct.labels.jsonl", labels)):
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (data / name).write_text(text, encoding="utf-8")
    return folder


def load(root: Path):
    return load_dataset(load_task("molp2s/gap"), "correct", root, cache=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(release=releases())
@example(release=ONE)
@example(release=MANY)
def test_every_record_the_spec_allows_is_loaded(release) -> None:
    tasks, labels = release
    with tempfile.TemporaryDirectory() as tmp:
        dataset = load(write(Path(tmp), tasks, labels))
    label_of = {label["record_id"]: label["label"] for label in labels}
    assert [s.id for s in dataset.samples] == [t["record_id"] for t in tasks]
    assert [s.gold for s in dataset.samples] == [label_of[t["record_id"]] for t in tasks]
    for number, (sample, line) in enumerate(zip(dataset.samples, tasks, strict=True), start=1):
        mask = {"token": line["mask"]} if isinstance(line["mask"], str) else line["mask"]
        assert sample.input == {**{k: line[k] for k in TASK_FIELDS}, "mask": mask}
        extra = {k: v for k, v in line.items() if k not in TASK_FIELDS}
        assert sample.meta.get("extra", {}) == extra
        assert sample.meta["line"] == number
        assert sample.meta["n_candidates"] == len(line["candidate_completed_smiles"])


DELETE = object()
# (file, field, new value, what the error names): each breaks one rule of the spec
BREAKS = [
    ("tasks", "record_id", DELETE, "record_id"),
    ("tasks", "record_id", "", "record_id"),
    ("tasks", "record_id", 7, "record_id"),
    ("tasks", "masked_smiles", DELETE, "masked_smiles: Field required"),
    ("tasks", "masked_smiles", "", "masked_smiles"),
    ("tasks", "masked_smiles", 5, "masked_smiles"),
    ("tasks", "masked_smiles", None, "masked_smiles"),
    ("tasks", "masked_smiles", "CCO", "has no mask"),
    ("tasks", "masked_smiles", "C1CC(([*]", "does not parse in RDKit"),
    ("tasks", "mask", DELETE, "mask: Field required"),
    ("tasks", "mask", 3, "mask"),
    ("tasks", "mask", None, "mask"),
    ("tasks", "mask", ["[*]"], "mask"),
    ("tasks", "properties", DELETE, "properties: Field required"),
    ("tasks", "properties", [], "properties"),
    ("tasks", "properties", None, "properties"),
    ("tasks", "properties", "gap", "properties"),
    ("tasks", "candidate_completed_smiles", DELETE, "candidate_completed_smiles: Field required"),
    ("tasks", "candidate_completed_smiles", [], "candidate_completed_smiles"),
    ("tasks", "candidate_completed_smiles", "C", "candidate_completed_smiles"),
    ("tasks", "candidate_completed_smiles", None, "candidate_completed_smiles"),
    ("tasks", "candidate_completed_smiles", ["C", 1], "candidate_completed_smiles.1"),
    ("tasks", "candidate_completed_smiles", ["C", "C1CC(("], "candidate 1"),
    ("labels", "record_id", DELETE, "record_id"),
    ("labels", "record_id", "", "record_id"),
    ("labels", "label", DELETE, "label: Field required"),
    ("labels", "label", True, "label"),
    ("labels", "label", "0", "label"),
    ("labels", "label", 0.0, "label"),
    ("labels", "label", None, "label"),
    ("labels", "label", -1, "outside its"),
    ("labels", "label", "n_candidates", "outside its"),
]


@pytest.mark.parametrize(
    ("file", "field", "value", "names"),
    BREAKS,
    ids=[f"{f}.{k}={'deleted' if v is DELETE else repr(v)}" for f, k, v, _ in BREAKS],
)
@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(release=releases(), which=st.integers(0, 3))
@example(release=ONE, which=0)
@example(release=MANY, which=2)
def test_a_record_broken_at_one_field_is_rejected_at_its_line(
    file: str, field: str, value: Any, names: str, release, which: int
) -> None:
    tasks, labels = (list(map(dict, lines)) for lines in release)
    lines = tasks if file == "tasks" else labels
    index = which % len(lines)
    broken = lines[index]
    if value is DELETE:
        del broken[field]
    elif value == "n_candidates":
        rid = broken["record_id"]
        [record] = [t for t in tasks if t["record_id"] == rid]
        broken[field] = len(record["candidate_completed_smiles"])
    else:
        broken[field] = value
    with tempfile.TemporaryDirectory() as tmp:
        root = write(Path(tmp), tasks, labels)
        name = "correct.jsonl" if file == "tasks" else "correct.labels.jsonl"
        with pytest.raises(BenchregError) as error:
            load(root)
        assert error.value.where == at(root / "data" / "gap" / name, index + 1)
        assert names in error.value.what
