"""The consistency check reports planted inconsistencies question by question."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg import load_task
from benchreg.core import registry
from benchreg.core.pipeline import data_root_for, load_dataset
from benchreg.families.reaction_mc.records import QUESTION_TYPES

AV = "all_varying"
SVR = "single_varying_reference"
AVR = "all_varying_reference"


def _findings(qtype: str, root: Path | None = None, **params):
    spec = load_task(f"reaction_mc/{qtype}")
    data_root = data_root_for(spec, {"reaction_mc": str(root)} if root else {})
    dataset = load_dataset(spec, None, data_root)
    check = registry.validators.get("reaction_mc_consistency")
    return check(dataset, None, **params)


@pytest.mark.parametrize("qtype", QUESTION_TYPES)
def test_embedded_sample_is_consistent(qtype: str) -> None:
    assert [str(f) for f in _findings(qtype)] == []


def _ref(option: str, yield_: float, **extra) -> dict:
    conditions = {"solvents": [{"content": "toluene", "SMILES": "Cc1ccccc1"}],
                  "ligand": [{"content": option, "SMILES": ""}], **extra}
    return {"conditions": conditions, "yield": yield_}


PLANTS = {
    "p_q1": (lambda q: q["meta"]["effective_scores"].__setitem__(1, 12.0),
             "option 1: meta.effective_scores=12 but the formula gives 40"),
    "p_q2": (lambda q: q["meta"]["option_relative_scores"].__setitem__(0, 0.9),
             "option 0: meta.option_relative_scores=0.9 but effective / best effective = 1"),
    "p_q3": (lambda q: q.update(answer=[1]), "answer=[1] but the best option(s) by the formula"),
    "p_q4": (lambda q: q["meta"]["yields"].__setitem__(0, 75),
             "option 0: meta.yields=75 but meta.scores.yield=80"),
    "p_q5": (lambda q: q["meta"].update(best_effective_score=70),
             "meta.best_effective_score=70 but the best option effective is 80"),
    "p_q6": (lambda q: q["meta"].update(best_yield=33),
             "meta.best_yield=33 is neither the highest option yield"),
    "p_q7": (lambda q: q["meta"]["scores"][1].update(dr="lots"), "unreadable dr 'lots'"),
    "p_q8": (lambda q: q["meta"].update(global_best_yield=50),
             "meta.global_best_yield=50 is below the option set's best"),
}


def test_planted_errors_reported_per_question(question, release) -> None:
    questions = [question("ok_q1", AV, [{"yield": 80}, {"yield": 40}, {"yield": 10}])]
    for qid, (plant, _) in PLANTS.items():
        q = question(qid, AV, [{"yield": 80}, {"yield": 40}, {"yield": 10}])
        plant(q)
        questions.append(q)
    findings = _findings(AV, release({AV: questions}))
    by_id: dict[str, list[str]] = {}
    for f in findings:
        by_id.setdefault(f.where, []).append(f.message)
    assert "ok_q1" not in by_id
    for qid, (_, message) in PLANTS.items():
        assert any(message in m for m in by_id.get(qid, [])), (qid, by_id.get(qid))
    errors = {f.where for f in findings if f.severity == "error"}
    assert errors == set(PLANTS) - {"p_q7"}  # the unreadable dr is a warning (fallback used)


def test_reference_rules(question, release) -> None:
    sv = SVR
    outcomes = [{"yield": 60}, {"yield": 30}]
    good = question("r_q1_ref", sv, outcomes, references=[_ref("L7", 20), _ref("L8", 25)])
    too_good = question("r_q2_ref", sv, outcomes, references=[_ref("L7", 20), _ref("L8", 75)])
    # L0 + fixed (K2CO3) + constant (toluene) is option 0 itself
    is_option = question("r_q3_ref", sv, outcomes, references=[
        _ref("L7", 20), _ref("L0", 25, reagents=[{"content": "K2CO3", "SMILES": ""}])])
    too_few = question("r_q4_ref", sv, outcomes, references=[_ref("L7", 20)])
    top = question("r_q5_ref", sv, outcomes, references=[_ref("L7", 20), _ref("L8", 60)])
    top["meta"]["global_best_effective_score"] = 60
    root = release({sv: [good, too_good, is_option, too_few, top]})
    findings = _findings(sv, root, check_pairs=False)
    found = {(f.where, f.message) for f in findings if f.severity == "error"}
    messages = {where: [m for w, m in found if w == where] for where, _ in found}
    assert "r_q1_ref" not in messages
    assert any("reference 2 (effective 75) is better than the best option" in m
               for m in messages["r_q2_ref"])
    assert any("reference 2 equals option 0" in m for m in messages["r_q3_ref"])
    assert any("1 reference condition groups" in m for m in messages["r_q4_ref"])
    assert any("exposes the table's top score" in m for m in messages["r_q5_ref"])


def test_all_varying_reference_needs_five_options(question, release) -> None:
    refs = [_ref("L7", 1), _ref("L8", 2)]
    q = question("a_q1_ref", AVR, [{"yield": y} for y in (10, 20, 30, 40)], references=refs)
    control = question("a_q1_ref_control", "all_varying_reference_control",
                       [{"yield": y} for y in (10, 20, 30, 40)])
    root = release({AVR: [q], "all_varying_reference_control": [control]})
    assert any("4 options left after removing references" in f.message
               for f in _findings(AVR, root))


def test_pairs_checked_against_sibling_file(question, release) -> None:
    refs = [_ref("L7", 1), _ref("L8", 2)]
    five = [{"yield": y} for y in (10, 20, 30, 40, 50)]
    ref_q1 = question("b_q1_ref", AVR, five, references=refs)
    ref_q2 = question("b_q2_ref", AVR, five, references=refs)
    ctrl_q1 = question("b_q1_ref_control", "all_varying_reference_control", five)
    ctrl_q1["options"][0] = {"ligand": [{"content": "other", "SMILES": ""}],
                             "reagents": [{"content": "B0", "SMILES": ""}]}
    orphan = question("b_q3_ref_control", "all_varying_reference_control", five)
    root = release({AVR: [ref_q1, ref_q2],
                    "all_varying_reference_control": [ctrl_q1, orphan]})
    for qtype in (AVR, "all_varying_reference_control"):
        found = {(f.where, f.message) for f in _findings(qtype, root)}
        assert ("b_q2_ref", "reference question without its _ref_control twin") in found
        assert any(w == "b_q1_ref_control" and "options differ from those of b_q1_ref" in m
                   for w, m in found)
        assert any(w == "b_q3_ref_control" and "control question without its _ref" in m
                   for w, m in found)


def test_zero_best_is_a_warning(question, release) -> None:
    root = release({AV: [question("z_q1", AV, [{"yield": 0}, {"yield": 0}])]})
    findings = _findings(AV, root)
    assert [(f.where, f.severity) for f in findings] == [("z_q1", "warning")]
    assert "effective score 0" in findings[0].message


def test_disagreement_explains_how_a_plain_ratio_was_read(question, release) -> None:
    q = question("e_q1", AV, [{"yield": 80, "er": 95}, {"yield": 40}])
    q["meta"]["effective_scores"][0] = 76.0  # the release read er 95 as 95:5
    findings = _findings(AV, release({AV: [q]}))
    message = next(f.message for f in findings if "option 0: meta.effective_scores" in f.message)
    assert "er '95' read as 95:1" in message


def test_findings_of_unchanged_files_are_reused_and_recomputed_after_a_change(
    question, release, monkeypatch, tmp_path: Path
) -> None:
    from benchreg.families.reaction_mc import consistency

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    bad = question("c_q1", AV, [{"yield": 80}, {"yield": 40}])
    bad["meta"]["effective_scores"][0] = 70.0
    root = release({AV: [bad, question("c_q2", AV, [{"yield": 5}, {"yield": 9}])]})
    first = _findings(AV, root)
    assert [f.where for f in first] == ["c_q1"]

    computed = []  # questions checked, by the loader or the validator
    real_question = consistency.QuestionChecker.question
    monkeypatch.setattr(consistency.QuestionChecker, "question",
                        lambda self, s: computed.append(s.id) or real_question(self, s))
    assert _findings(AV, root) == first and computed == []  # reused
    assert _findings(AV, root, rel_tol=1e-6) == first and computed == ["c_q1", "c_q2"]

    bad["meta"]["effective_scores"][0] = 80.0  # fixed: the file's sha256 changes
    release({AV: [bad, question("c_q2", AV, [{"yield": 5}, {"yield": 9}])]})
    computed.clear()
    assert _findings(AV, root) == [] and computed == ["c_q1", "c_q2"]  # once, while loading


def test_the_loader_checks_each_question_as_the_validator_would(question, release) -> None:
    """At the default tolerances the validator reports the findings the loader made while
    building the samples: the same as checking the loaded samples again."""
    from benchreg.families.reaction_mc import consistency, validators

    bad = question("c_q1", AV, [{"yield": 80}, {"yield": 40}])
    bad["meta"]["effective_scores"][0] = 70.0
    bad["meta"]["option_relative_scores"][1] = 0.3
    root = release({AV: [bad, question("c_q2", AV, [{"yield": 5}, {"yield": 5}])]})
    spec = load_task(f"reaction_mc/{AV}")
    dataset = load_dataset(spec, None, data_root_for(spec, {"reaction_mc": str(root)}))
    made = dataset.checked["reaction_mc_consistency"]
    assert made["tolerances"] == [1e-4, 1e-4] and len(made["findings"]) >= 2
    checker = consistency.QuestionChecker(1e-4, 1e-4)
    for sample in dataset.samples:
        checker.question(sample)
    assert [tuple(f) for f in made["findings"]] == [
        (f.where, f.message, f.severity) for f in checker.findings
    ]
    assert validators.check_consistency(dataset, check_pairs=False) == checker.findings


def _perturbed_samples(count: int, seed: int) -> list:
    """Questions of the embedded sample with random disagreements planted in their numbers
    (slightly or far off, missing, of the wrong type, NaN, notation cells)."""
    import copy
    import json
    import random

    from pydantic import TypeAdapter, ValidationError

    from benchreg.families.reaction_mc.loader import to_sample
    from benchreg.families.reaction_mc.records import Question

    sample = Path(__file__).parents[3] / "benchreg/families/reaction_mc/sample"
    pool = [q for qtype in ("single_varying", "all_varying", "single_varying_reference")
            for q in json.loads((sample / f"multiple_choice_{qtype}.json").read_text("utf-8"))]
    rng = random.Random(seed)
    odd = [None, 0, 1, True, "x", float("nan"), float("inf"), -1.0, 0.0]

    def near(x):
        base = x if type(x) is float and x == x else 1.0
        return base * (1 + rng.choice([1e-7, 1e-3, 0.5, -1e-3, -0.3]))

    def perturb(q):
        q = copy.deepcopy(q)
        meta, n = q["meta"], len(q["options"])
        for _ in range(rng.randrange(4)):
            i, kind = rng.randrange(n), rng.randrange(11)
            if kind < 2:
                name = ("effective_scores", "option_relative_scores")[kind]
                meta[name][i] = rng.choice([*odd, near(meta[name][i])])
            elif kind == 2:
                meta["yields"][i] = rng.choice([*odd, meta["yields"][i]])
            elif kind == 3:
                meta["scores"][i]["yield"] = rng.choice([*odd, 50.0, "95%", ">99"])
            elif kind < 8:
                name = ("best_effective_score", "best_yield", "global_best_effective_score",
                        "global_best_yield")[kind - 4]
                meta[name] = rng.choice([*odd, near(meta.get(name)), 99.0, 1.0])
            elif kind == 8:
                q["answer"] = [rng.randrange(n)]
            elif kind == 9:
                meta["scores"][i]["ee"] = rng.choice([None, 90, "95% ee", "n.d.", -20])
            else:
                meta["scores"][i]["dr"] = rng.choice([None, "10:1", ">20:1", 3])
        return q

    adapter = TypeAdapter(Question)
    out = []
    for k in range(count):
        try:
            out.append(to_sample(adapter.validate_python(perturb(pool[k % len(pool)]))))
        except ValidationError:
            continue
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_the_quick_agreement_check_finds_what_the_full_checks_find(seed: int, monkeypatch) -> None:
    """The checker skips its per-option checks for a question whose numbers agree (`_agrees`);
    on questions with planted disagreements its findings are those of the full checks."""
    from benchreg.families.reaction_mc import consistency

    samples = _perturbed_samples(600, seed)

    def findings():
        checker = consistency.QuestionChecker(1e-4, 1e-4)
        for sample in samples:
            checker.question(sample)
        return [(f.where, f.message, f.severity) for f in checker.findings]

    quick = findings()
    monkeypatch.setattr(consistency.QuestionChecker, "_agrees", lambda *args: False)
    full = findings()
    assert quick == full
    assert len(full) > 300 and len({message.split(":")[0] for _, message, _ in full}) > 20
