"""Columnar runs (columns.py, trec.py, predictions.py, vector.py) give exactly what the dict
path gives: the same statuses, answers, resolutions and metric values, on seeded random runs
of the three modalities held in columns (with scope, flags, null scores, claimed times, ranges,
duplicates and bad lines mixed in); TREC chunks read with numpy equal the line-by-line read."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchreg.core.types import Dataset, Prediction, Sample, Status
from benchreg.families.retrieval import predictions as reader
from benchreg.families.retrieval import trec
from benchreg.families.retrieval.answer import RetrievalAnswer
from benchreg.families.retrieval.columns import ResultColumns, columns_of
from benchreg.families.retrieval.resolver import make_resolver

TASK = "retrieval/x"
UNIT = {"pdf": "page", "conversation": "turn", "image": None}
JUNK: list[Any] = [
    {"source_id": 5, "region": {}, "score": 1.0},
    {"source_id": "", "region": {}, "score": 1.0},
    {"source_id": ["s1"], "region": {}, "score": 1.0},
    {"source_id": "s1", "region": [], "score": 1.0},
    {"source_id": "s1", "region": "", "score": 1.0},
    {"source_id": "s1", "region": {"turn": True, "page": True}, "score": 1.0},
    {"source_id": "s1", "region": {"turn": -1}, "score": 1.0},
    {"source_id": "s1", "region": {"page": 0}, "score": 1.0},
    {"source_id": "s1", "region": {"page": 1.0}, "score": 1.0},
    {"source_id": "s1", "region": {}, "score": "1"},
    {"source_id": "s1", "region": {}, "score": 1.0, "holder": 3},
    {"source_id": "s1", "region": {}, "score": 1.0, "observed_at": "yesterday"},
    {"source_id": "s1", "region": {}, "score": 1.0, "text": "extra key"},
    ["s1"],
    7,
]


def _region(modality: str, value: int) -> dict[str, Any]:
    key = UNIT[modality]
    return {key: value} if key else {}


def make_case(modality: str, n: int, seed: int) -> tuple[list[Sample], list[dict[str, Any]]]:
    rng = random.Random(seed)
    least = 1 if modality == "pdf" else 0
    samples, lines = [], []
    for q in range(n):
        qid = f"q{q}"
        doc = f"s{rng.randrange(4)}"
        gold = [
            {
                "source_id": doc if rng.random() < 0.8 else f"s{rng.randrange(6)}",
                "region": _region(modality, rng.randint(least, 6)),
            }
            for _ in range(rng.randint(0, 3))
        ]
        meta = {
            "modality": modality,
            "session": doc if rng.random() < 0.5 else None,
            "as_of": "2024-01-01T00:00:00+00:00" if rng.random() < 0.2 else None,
            "holder": "alice" if rng.random() < 0.2 else None,
        }
        samples.append(Sample(qid, {}, gold, meta))
        results = []
        for _ in range(rng.randint(0, 12)):
            item: dict[str, Any] = {
                "source_id": f"s{rng.randrange(5)}",
                "region": _region(modality, rng.randint(least, 6)),
                "score": round(rng.uniform(-2, 2), 1),
            }
            results.append(item)
        kind = rng.random()
        if kind < 0.1 and results:
            for item in results:
                item["score"] = None
        elif kind < 0.2 and results:
            for item in results:
                item.update(
                    atom_id=f"a{rng.randrange(9)}",
                    holder="alice",
                    observed_at="2023-12-01T00:00:00+00:00",
                )
        elif kind < 0.25 and results and modality != "image":
            key = UNIT[modality]
            results[0]["region"] = {f"{key}_start": least, f"{key}_end": least + 1}
        elif kind < 0.3 and results:
            results[-1]["score"] = 3  # an int score: the dict path
        elif kind < 0.33 and results:
            del results[0]["score"]  # keys differ between results
        if rng.random() < 0.05 and results:  # something that is no result (invalid)
            results[rng.randrange(len(results))] = rng.choice(JUNK)
        line: dict[str, Any] = {"query_id": qid, "results": results}
        if rng.random() < 0.3:
            line["latency_s"] = rng.random()
        lines.append(line)
    return samples, lines


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def scored(samples: list[Sample], found: dict[str, Prediction], many: bool) -> list[Prediction]:
    schema = RetrievalAnswer()
    preds = []
    for sample in samples:
        pred = found.get(sample.id) or Prediction.missing(sample.id)
        if pred.status is Status.OK:
            checked = schema.check(pred.answer, sample)
            pred.answer, pred.status, pred.detail = checked.answer, checked.status, checked.detail
        preds.append(pred)
    resolve = make_resolver(Dataset(samples=[], files=[], info={"manifest": {}}))
    ok = [(s, p) for s, p in zip(samples, preds, strict=True) if p.status is Status.OK]
    if many:
        resolve.resolve_many([s for s, _ in ok], [p for _, p in ok])
    else:
        for s, p in ok:
            p.resolved = resolve(s, p)
    return preds


def same(a: list[Prediction], b: list[Prediction]) -> int:
    held = 0
    for x, y in zip(a, b, strict=True):
        assert (x.sample_id, x.status, x.detail, x.latency_s) == (
            y.sample_id,
            y.status,
            y.detail,
            y.latency_s,
        )
        if x.answer is not None:
            results = x.answer["results"]
            held += isinstance(results, ResultColumns)
            # as JSON text (a NaN score of an invalid answer equals itself there), keys sorted:
            # columns write a result's keys in one order (source_id, region, score, ...)
            assert json.dumps(list(results), sort_keys=True) == json.dumps(
                list(y.answer["results"]), sort_keys=True
            )
            assert x.answer["latency_s"] == y.answer["latency_s"]
        assert x.resolved == y.resolved, x.sample_id
        assert x.metadata == y.metadata
    return held


@pytest.mark.parametrize("modality", ["pdf", "conversation", "image"])
def test_jsonl_columns_equal_the_dict_path(
    tmp_path: Path, modality: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples, lines = make_case(modality, 300, seed=len(modality))
    path = write_jsonl(
        tmp_path / "run.jsonl", [*lines, "not json", lines[3], {**lines[4], "latency_s": 99.0}]
    )
    fast = scored(samples, reader.read_run(path, samples, TASK).by_id, many=True)
    monkeypatch.setattr(reader, "_modality", lambda samples: None)
    slow = scored(samples, reader.read_run(path, samples, TASK).by_id, many=False)
    assert same(fast, slow) > 100  # most answers were columns
    assert fast[4].status is Status.INVALID and "conflicting" in (fast[4].detail or "")


def write_trec(folder: Path, samples: list[Sample], lines: list[dict[str, Any]], seed: int) -> Path:
    """The JSONL run as a TREC run with atoms (one atom per distinct result), shuffled lines,
    tied scores, a blank line, a malformed line and a docno the atoms file lacks."""
    rng = random.Random(seed)
    atoms: dict[str, dict[str, Any]] = {}
    rows = []
    for line in lines:
        for item in line["results"]:
            if not isinstance(item, dict):
                continue
            atom = {k: v for k, v in item.items() if k != "score"}
            atom_id = json.dumps(atom, sort_keys=True)
            atoms.setdefault(atom_id, {**atom, "atom_id": f"d{len(atoms)}"})
            score = item.get("score")
            score = 0.5 if score is None or rng.random() < 0.2 else score
            rows.append(f"{line['query_id']} Q0 {atoms[atom_id]['atom_id']} 0 {score} t")
    rng.shuffle(rows)
    rows[5:5] = [
        "",
        "q1 Q0 d1 x",
        "q2 Q0 nowhere 1 1.0 t",
        "q3\tQ0 d2 1 1e400 t",
        "q4 Q0 d3 1 nan t",
        "q5 Q0 d1 1 -0.0 t",
        "q5 Q0 d2 1 0.0 t",
    ]
    run = folder / "run.trec"
    run.write_text("\n".join(rows) + "\n")
    write_jsonl(folder / "run.trec.atoms.jsonl", list(atoms.values()))
    return run


@pytest.mark.parametrize("modality", ["pdf", "conversation"])
def test_trec_columns_equal_the_dict_path(
    tmp_path: Path, modality: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples, lines = make_case(modality, 200, seed=7)
    run = write_trec(tmp_path, samples, lines, seed=3)
    monkeypatch.setattr(trec, "CHUNK_BYTES", 4096)  # many chunks: fast and slow ones
    got = reader.read_run(run, samples, TASK)
    fast = scored(samples, got.by_id, many=True)
    monkeypatch.setattr(reader, "_modality", lambda samples: None)
    monkeypatch.setattr(trec, "_parse_chunk", lambda *args: None)
    again = reader.read_run(run, samples, TASK)
    slow = scored(samples, again.by_id, many=False)
    assert same(fast, slow) > 50
    assert got.notes == again.notes
    assert any(f"{run}:7" in note for note in got.notes)  # the malformed line, by file:line
    assert fast[2].status is Status.INVALID and "nowhere" in (fast[2].detail or "")


def test_trec_fast_chunks_read_what_the_lines_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    atoms = [f"doc-{i}" for i in range(50)] + ["é", "x" * 40]
    rng = random.Random(1)
    rows = []
    for i in range(2000):
        docno = rng.choice([*atoms[:50], "missing-doc", "x" * 40, "doc-1" + "9" * 30])
        rows.append(f"q{rng.randrange(80)}  Q0\t{docno} {i} {rng.choice(['1.5', '-2', '.5e1'])} t")
    rows[100] = "q1 Q0 é 1 2.0 t"  # non-ASCII: that chunk line by line
    rows[900] = "q1 Q0 doc-1 1 2.0"  # 5 fields
    rows[1500] = "q2\x0bQ0 doc-2 1 2.0 t"  # a line break for str.splitlines
    run = tmp_path / "run.trec"
    run.write_text("\n".join(rows) + "\n\n")
    monkeypatch.setattr(trec, "CHUNK_BYTES", 1500)
    from benchreg.core.predictions import PredictionCollector

    def read(fast: bool) -> tuple[trec.TrecLines, list[str]]:
        collector = PredictionCollector(run, [], task=TASK)
        if not fast:
            monkeypatch.setattr(trec, "_parse_chunk", lambda *args: None)
        return trec.read_lines(run, atoms, collector), collector.malformed

    (a, bad_a), (b, bad_b) = read(True), read(False)
    for name in ("q", "atom", "score", "first_line"):
        assert list(getattr(a, name)) == list(getattr(b, name)), name
    assert list(a.qids) == list(b.qids) and a.missing == b.missing
    # \\v splits line 1501 in two for str.splitlines: both halves are malformed
    assert bad_a == bad_b == [f"{run}:901", f"{run}:1501", f"{run}:1502"]


def test_columns_write_out_as_read(tmp_path: Path) -> None:
    samples, lines = make_case("conversation", 100, seed=11)
    path = write_jsonl(tmp_path / "run.jsonl", lines)
    found = reader.read_run(path, samples, TASK).by_id
    for line in lines:
        answer = found[line["query_id"]].answer
        held = columns_of(answer)
        if held is not None:
            assert held.model_dump() == line["results"]  # equal dicts (key order aside)
            assert [held[i] for i in range(len(held))] == line["results"]
            assert held[-1] == line["results"][-1] and held[1:3] == line["results"][1:3]


def test_vector_first_ranks_by_sorting_equal_the_passes() -> None:
    from benchreg.families.retrieval import vector

    rng = np.random.default_rng(0)
    query = np.sort(rng.integers(0, 50, 3000))
    within = np.concatenate([np.arange(c) for c in np.bincount(query, minlength=50)])
    source, unit = rng.integers(0, 4, 3000), rng.integers(0, 5, 3000)
    valid = rng.random(3000) < 0.9
    gq = rng.integers(0, 50, 120)
    gs, gu = rng.integers(-2, 4, 120), rng.integers(0, 5, 120)
    passes = vector._first_ranks(query, source, unit, within, valid, gq, gs, gu)
    sorted_ = vector._first_ranks_sorted(query, source, unit, within, valid, gq, gs, gu)
    assert passes.tolist() == sorted_.tolist() and passes.any()


@pytest.mark.parametrize("modality", ["pdf", "conversation", "image"])
@pytest.mark.parametrize("nulls", [False, True])
def test_column_rows_keep_the_keys_in_order(tmp_path: Path, modality: str, nulls: bool) -> None:
    samples, lines = make_case(modality, 120, seed=5)
    if not nulls:  # no null score in the whole run: rows are built in one pass
        for line in lines:
            for item in line["results"]:
                if isinstance(item, dict) and item.get("score", 0.0) is None:
                    item["score"] = 0.5
    path = write_jsonl(tmp_path / "run.jsonl", lines)
    found = reader.read_run(path, samples, TASK).by_id
    held = [columns_of(found[line["query_id"]].answer) for line in lines]
    assert sum(h is not None for h in held) > 50
    first = next(h for h in held if h is not None)
    assert first.run.has_null_score is nulls
    for line, results in zip(lines, held, strict=True):
        if results is not None:
            want = line["results"]
            assert results.model_dump() == want and results[2:5] == want[2:5]
            # (the optional keys come in OPTIONAL's order, as before: compared as sets)
            assert [list(d)[:3] for d in results] == [list(d)[:3] for d in want]
            assert [list(d["region"]) for d in results] == [list(d["region"]) for d in want]


def _heads_equal_the_dicts(found: dict[str, Prediction]) -> int:
    """Every columnar answer's encoded head is byte for byte orjson's text of its result dicts;
    returns how many heads were encoded (the others take the dict path)."""
    import orjson

    encoded = 0
    for pred in found.values():
        held = columns_of(pred.answer)
        if held is None:
            continue
        for limit in (1, 3, len(held), len(held) + 5):
            head = held.json_head(limit)
            if head is not None:
                encoded += 1
                assert head.text == orjson.dumps(held[:limit]), pred.sample_id
    return encoded


@pytest.mark.parametrize("modality", ["pdf", "conversation", "image"])
def test_encoded_heads_of_jsonl_columns_are_the_dicts_text(tmp_path: Path, modality: str) -> None:
    samples, lines = make_case(modality, 150, seed=13)
    for line in lines:  # every result scored: plain rows (a run with null scores: dicts)
        for item in line["results"]:
            if isinstance(item, dict) and item.get("score") is None:
                item["score"] = 0.25
    found = reader.read_run(write_jsonl(tmp_path / "run.jsonl", lines), samples, TASK).by_id
    encoded = _heads_equal_the_dicts(found)
    if modality == "image":  # an image's {} region takes the dict path
        assert encoded == 0
    else:
        assert encoded > 100


@pytest.mark.parametrize("modality", ["pdf", "conversation"])
def test_encoded_heads_of_trec_columns_are_the_dicts_text(tmp_path: Path, modality: str) -> None:
    samples, lines = make_case(modality, 150, seed=17)
    run = write_trec(tmp_path, samples, lines, seed=5)
    assert _heads_equal_the_dicts(reader.read_run(run, samples, TASK).by_id) > 100


def test_a_previewed_row_writes_what_the_dicts_write(tmp_path: Path) -> None:
    """samples.jsonl rows of columnar answers, cut to their first results: the same JSON as
    the cut list of dicts."""
    from benchreg.core.io import json_line
    from benchreg.core.scoring import ANSWER_PREVIEW_ITEMS, answer_preview

    samples, lines = make_case("pdf", 80, seed=19)
    run = write_trec(tmp_path, samples, lines, seed=2)
    found = reader.read_run(run, samples, TASK).by_id
    compared = 0
    for pred in found.values():
        held = columns_of(pred.answer)
        if held is None or len(held) <= ANSWER_PREVIEW_ITEMS:
            continue
        preview, cut = answer_preview(pred.answer)
        as_dicts = {**pred.answer, "results": list(held[:ANSWER_PREVIEW_ITEMS])}
        assert cut == {"results": len(held)}
        assert json_line({"answer": preview}) == json_line({"answer": as_dicts})
        compared += 1
    assert compared > 10
