"""Loader and question records: structural errors name the file and the question id."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchreg import BenchregError, load_task, run_task
from benchreg.families.reaction_mc.records import QUESTION_TYPES

SV = "single_varying"


def _load(root: Path, qtype: str = SV):
    return run_task(load_task(f"reaction_mc/{qtype}"), view=None, system_cfg={"name": "baseline"},
                    roots={"reaction_mc": str(root)})


def _broken(question, release, mutate: Callable[[dict[str, Any]], None], qtype: str = SV,
            qid: str = "tab_q1") -> Path:
    good = question("tab_q2" if qid != "tab_q2" else "tab_q3", qtype, [{"yield": 50}, {"yield": 9}])
    bad = question(qid, qtype, [{"yield": 50}, {"yield": 10}])
    mutate(bad)
    return release({qtype: [good, bad]})


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda q: q["meta"]["yields"].pop(), "meta.yields has 1 entries for 2 options"),
        (lambda q: q["meta"]["scores"].append({"yield": 1}), "meta.scores has 3 entries"),
        (lambda q: q["meta"]["option_source_entries"].pop(), "meta.option_source_entries"),
        (lambda q: q.update(answer=[2]), "answer index 2 is outside 0..1"),
        (lambda q: q.update(answer=[True]), "answer must be a list of integer"),
        (lambda q: q.update(answer=[]), "answer"),
        (lambda q: q.update(options=[]), "options"),
        (lambda q: q.update(target_key=None), "needs a target_key"),
        (lambda q: q.update(question_type="all_varying"), "question_type 'all_varying'"),
        (lambda q: q.update(id="tab_q1_ref"), "id suffix '_ref' does not fit single_varying"),
        (lambda q: q.update(id="tab_question1"), "id does not match"),
        (lambda q: q["input"].pop("reactants"), "input.reactants"),
        (lambda q: q["input"].update(reference_conditions=[{"conditions": {}, "yield": 1}]),
         "must not carry references"),
    ],
)
def test_schema_errors_name_file_and_id(question, release, mutate, message: str) -> None:
    root = _broken(question, release, mutate)
    with pytest.raises(BenchregError) as info:
        _load(root)
    text = info.value.message
    assert message in text
    assert "multiple_choice_single_varying.json" in text
    assert "(question tab_q" in text or "(question tab_question1)" in text


def test_reference_question_needs_references(question, release) -> None:
    root = release({"single_varying_reference": [
        question("tab_q1_ref", "single_varying_reference", [{"yield": 5}, {"yield": 6}])]})
    with pytest.raises(BenchregError, match=r"needs input\.reference_conditions"):
        _load(root, "single_varying_reference")


def test_duplicate_id(question, release) -> None:
    q = question("tab_q1", SV, [{"yield": 5}, {"yield": 6}])
    with pytest.raises(BenchregError, match="duplicate id") as info:
        _load(release({SV: [q, q]}))
    message = info.value.message
    assert "multiple_choice_single_varying.json[#1]" in message and "'tab_q1'" in message
    assert "first at " in message and "multiple_choice_single_varying.json[#0]" in message


def test_duplicate_key_in_a_question(question, tmp_path: Path) -> None:
    text = json.dumps([question("tab_q1", SV, [{"yield": 5}, {"yield": 6}])])
    text = text.replace('"target_key": "ligand"', '"target_key": "ligand", "target_key": "base"')
    (tmp_path / f"multiple_choice_{SV}.json").write_text(text)
    with pytest.raises(BenchregError, match="duplicate key 'target_key'") as info:
        _load(tmp_path)
    assert "multiple_choice_single_varying.json" in info.value.message


def test_duplicate_key_in_a_jsonl_line_names_the_line(question, tmp_path: Path) -> None:
    lines = [json.dumps(question(f"tab_q{i}", SV, [{"yield": 5}, {"yield": 6}])) for i in (1, 2)]
    lines[1] = lines[1].replace('"id": "tab_q2"', '"id": "tab_q2", "id": "tab_q3"')
    (tmp_path / f"multiple_choice_{SV}.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchregError, match=r"\.jsonl:2: duplicate key 'id'"):
        _load(tmp_path)


def test_missing_file_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match=r"roots.reaction_mc="):
        _load(tmp_path)


def test_not_a_list(tmp_path: Path) -> None:
    (tmp_path / f"multiple_choice_{SV}.json").write_text('{"id": 1}')
    with pytest.raises(BenchregError, match="expected a JSON list"):
        _load(tmp_path)


def test_jsonl_release_is_read(question, tmp_path: Path) -> None:
    lines = [json.dumps(question(f"tab_q{i}", SV, [{"yield": 5}, {"yield": 6 + i}]))
             for i in (1, 2)]
    (tmp_path / f"multiple_choice_{SV}.jsonl").write_text("\n".join(lines) + "\n")
    result = _load(tmp_path)
    assert [s.id for s in result.samples] == ["tab_q1", "tab_q2"]
    assert result.dataset.files[0].suffix == ".jsonl"


def test_jsonl_error_names_line(question, tmp_path: Path) -> None:
    bad = question("tab_q2", SV, [{"yield": 5}, {"yield": 6}])
    bad["answer"] = [9]
    lines = [json.dumps(question("tab_q1", SV, [{"yield": 5}, {"yield": 6}])), json.dumps(bad)]
    (tmp_path / f"multiple_choice_{SV}.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchregError, match=r"\.jsonl:2 \(question tab_q2\)"):
        _load(tmp_path)


def test_flat_reference_shape_is_accepted(question, release) -> None:
    refs = [{"ligand": [{"content": "L9", "SMILES": ""}], "yield": 3.0},
            {"conditions": {"ligand": [{"content": "L8", "SMILES": ""}]}, "scores": {"yield": 4}}]
    q = question("tab_q1_ref", "single_varying_reference", [{"yield": 5}, {"yield": 6}],
                 references=refs)
    result = _load(release({"single_varying_reference": [q]}), "single_varying_reference")
    loaded = result.samples[0].input["input"]["reference_conditions"]
    assert loaded[0]["conditions"] == {"ligand": [{"content": "L9", "SMILES": ""}]}
    assert loaded[0]["outcome"] == {"yield": 3.0}
    assert loaded[1]["outcome"] == {"yield": 4}


@pytest.mark.parametrize("qtype", QUESTION_TYPES)
def test_samples_hold_the_questions_of_the_file(qtype: str) -> None:
    """Samples are built from the validated questions' own values (no second copy): they hold
    the file's question, None fields of `input` left out, absent optional fields defaulted and
    reference conditions in their normal form."""
    from benchreg.families import reaction_mc
    from benchreg.families.reaction_mc.loader import (
        RELEASE_META_KEYS,
        data_file_name,
        read_questions,
        to_sample,
    )
    from benchreg.families.reaction_mc.records import Reference

    path = Path(reaction_mc.__file__).parent / "sample" / data_file_name(qtype)
    raw = json.loads(path.read_text(encoding="utf-8"))
    for question, sample in zip(raw, map(to_sample, read_questions(path, qtype)), strict=True):
        inp = {"constant_conditions": {}, **question["input"]}
        inp = {k: v for k, v in inp.items() if v is not None}
        for part in ("reactants", "products"):
            inp[part] = [{"content": "", "SMILES": "", **m} for m in inp[part]]
        if "reference_conditions" in inp:
            inp["reference_conditions"] = [
                Reference.model_validate(r).model_dump() for r in inp["reference_conditions"]
            ]
        assert sample.input == {
            "question_type": question["question_type"],
            "target_key": question.get("target_key"),
            "varying_keys": question.get("varying_keys", []),
            "input": inp,
            "options": question["options"],
        }
        assert sample.meta["release"] == {k: question["meta"].get(k) for k in RELEASE_META_KEYS}
        assert sample.gold == question["answer"]


def _many(question, n: int = 120) -> list[dict[str, Any]]:
    questions = [question(f"t{i}_q1", SV, [{"yield": 10 + i % 7}, {"yield": 5, "ee": 90}])
                 for i in range(n)]
    for q in questions[::9]:  # a consistency finding here and there
        q["meta"]["effective_scores"][0] += 1.0
    return questions


def _rows(dataset) -> list[tuple]:
    return [(s.id, s.input, s.gold, s.meta) for s in dataset.samples]


def test_a_repeated_load_of_an_unchanged_file_reuses_its_samples(
    question, release, tmp_path: Path, monkeypatch
) -> None:
    """The loading door answers for an unchanged file (from this process's memory, or from the
    loaded-data cache on disk for a file of 1 MiB or more) with the samples and the consistency
    findings of the first read; a changed file is read again."""
    from benchreg.core.load import CACHE_MIN_BYTES, forget
    from benchreg.core.pipeline import data_root_for, load_dataset
    from benchreg.families.reaction_mc import loader

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    questions = _many(question, 700)
    root = release({SV: questions})
    assert (root / loader.data_file_name(SV)).stat().st_size >= CACHE_MIN_BYTES
    spec = load_task(f"reaction_mc/{SV}")

    def load(cache: bool = True):
        return load_dataset(spec, None, data_root_for(spec, {"reaction_mc": str(root)}),
                            cache=cache)

    first = load()
    assert (first.info["checks"], first.info["loaded"]) == ("run", "read")
    assert first.info["question_type"] == SV and first.info["questions"] == 700
    assert len(first.checked["reaction_mc_consistency"]["findings"]) == 78
    built = []
    to_sample = loader.to_sample
    monkeypatch.setattr(loader, "to_sample", lambda *a: built.append(1) or to_sample(*a))
    again = load()
    assert (again.info["checks"], again.info["loaded"]) == ("cached", "memory") and built == []
    forget()
    from_disk = load()
    assert (from_disk.info["checks"], from_disk.info["loaded"]) == ("cached", "cache")
    assert built == []
    for other in (again, from_disk):
        assert _rows(other) == _rows(first) and other.checked == first.checked
    assert load(cache=False).info["loaded"] == "read" and len(built) == 700
    questions[0]["answer"] = [0]
    questions[0]["meta"]["yields"][0] = 10.0  # same numbers, other bytes
    release({SV: questions})
    built.clear()
    assert load().info["checks"] == "run" and len(built) == 700


@pytest.mark.parametrize("layout", [{}, {"separators": (",", ":")}, {"indent": 1}])
def test_the_layout_of_a_file_does_not_change_its_samples(
    question, release, tmp_path: Path, layout: dict
) -> None:
    """A one-line question list gives the samples of an indented one."""
    from benchreg.core.pipeline import data_root_for, load_dataset
    from benchreg.families.reaction_mc.loader import data_file_name

    spec = load_task(f"reaction_mc/{SV}")
    root = release({SV: _many(question)})
    path = root / data_file_name(SV)
    indented = load_dataset(spec, None, data_root_for(spec, {"reaction_mc": str(root)}),
                            cache=False)
    path.write_text(json.dumps(json.loads(path.read_text("utf-8")), **layout), "utf-8")
    laid_out = load_dataset(spec, None, data_root_for(spec, {"reaction_mc": str(root)}),
                            cache=False)
    assert _rows(laid_out) == _rows(indented) and len(_rows(indented)) == 120
    assert laid_out.checked == indented.checked


def test_rows_are_the_samples_of_the_validated_questions_values_and_types_kept(
    question, release
) -> None:
    """Every meta.scores entry keeps its values, types and key order (5.0 stays a float, -0.0
    stays -0.0); the rows are the samples of the validated questions."""
    from benchreg.families.reaction_mc.loader import (
        data_file_name,
        read_questions,
        read_rows,
        to_sample,
    )

    questions = _many(question, 6)
    questions[1]["meta"]["scores"][1] = {"yield": 5.0, "ee": 90}  # 5.0, not 5
    questions[2]["meta"]["scores"][1] = {"ee": 90, "yield": 5}  # another key order
    questions[3]["meta"]["scores"][0] = {"yield": -0.0}
    root = release({SV: questions})
    rows = read_rows(root / data_file_name(SV), SV)
    scores = [row[3]["release"]["scores"] for row in rows]
    assert list(scores[2][1]) == ["ee", "yield"] and str(scores[3][0]["yield"]) == "-0.0"
    assert type(scores[1][1]["yield"]) is float and type(scores[0][1]["yield"]) is int
    alone = [to_sample(q) for q in read_questions(root / data_file_name(SV), SV)]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (s.id, s.input, s.gold, s.meta) for s in alone
    ]
    assert [s.meta["release"]["scores"] for s in alone] == [
        q["meta"]["scores"] for q in questions
    ]


@pytest.mark.parametrize("where", ["late in the file", "an id given twice"])
def test_a_problem_late_in_a_file_names_its_question(question, release, where: str) -> None:
    questions = _many(question, 1200)  # more than one validation batch
    if where == "late in the file":
        questions[1100]["answer"] = [7]
    else:
        questions[1110]["id"] = questions[3]["id"]
    root = release({SV: questions})
    with pytest.raises(BenchregError) as info:
        _load(root)
    error = str(info.value)
    if where == "late in the file":
        assert "[#1100] (question t1100_q1)" in error and "answer index 7 is outside" in error
    else:
        assert "[#1110]" in error and "duplicate id 't3_q1'" in error and "[#3]" in error


def test_an_unknown_question_type_is_one_clear_error(question, release) -> None:
    from benchreg.core.pipeline import data_root_for, load_dataset

    spec = load_task(f"reaction_mc/{SV}")
    spec = spec.evolve(loader={"name": spec.loader.name,
                               "params": {"question_type": "single_varyng"}})
    root = release({SV: _many(question, 3)})
    with pytest.raises(BenchregError, match="unknown question_type 'single_varyng'"):
        load_dataset(spec, None, data_root_for(spec, {"reaction_mc": str(root)}))
