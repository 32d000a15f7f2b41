"""Question files generated from the spec (section 7, docs/reaction_mc.md) are accepted by the
loader; a question changed at one field to break one rule is rejected, naming its place.

The strategies are written from the spec and the family's documented schema, not from
`records.py`: every rule's boundary (one option, an answer of one index, optional fields absent
or null, fields beyond the spec's, each question type's id suffix) is an explicit example, so a
rule of the pydantic model tightened by mistake fails here without depending on luck.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchreg import BenchregError, load_task
from benchreg.core.pipeline import data_root_for, load_dataset

# spec 6.1 / 7.1: the question types and the id suffix each one's ids carry
SUFFIX = {
    "single_varying": "",
    "all_varying": "",
    "single_varying_reference": "_ref",
    "all_varying_reference": "_ref",
    "single_varying_reference_control": "_ref_control",
    "all_varying_reference_control": "_ref_control",
}
TYPES = tuple(SUFFIX)
ALIGNED = (  # spec 7.3: meta lists aligned with `options`
    "yields",
    "effective_scores",
    "scores",
    "option_relative_scores",
    "option_source_entries",
)
OPTIONAL_META = (  # spec 7.3: meta fields a question may leave out
    "best_yield",
    "best_effective_score",
    "global_best_yield",
    "global_best_effective_score",
    "best_entry_indices",
    "global_best_entry_indices",
    "doi",
    "source_file",
    "parent_table_id",
    "main_product_smiles",
    "total_entries_in_source_table",
)
OUTCOME_KEYS = ("yield", "ee", "er", "dr", "rr", "scores", "effective_score")  # docs: references
KNOWN_INPUT = (
    "reactants",
    "products",
    "constant_conditions",
    "fixed_conditions",
    "reference_conditions",
)


def single(question_type: str) -> bool:
    return question_type.startswith("single_varying")


def reference(question_type: str) -> bool:
    return question_type.endswith("_reference")


# --- strategies from the spec ----------------------------------------------------------------

texts = st.text(alphabet="abcXYZ019 -()%.:=#[]CNOc试剂溶", max_size=6)
names = st.text(alphabet="abcxyz_", min_size=1, max_size=5)
condition_keys = st.sampled_from(
    ["ligand", "solvents", "reagents", "catalysts", "reaction_temperature", "试剂", "Anode(+)"]
)
# docs "Outcome notations": numbers, notations in text, null
notations = st.one_of(
    st.none(),
    st.integers(-5, 120),
    st.floats(-5, 120, allow_nan=False),
    st.sampled_from(["85%", "<5%", "trace", "n.d.", "quant.", "95:5", ">20:1", "92% ee", "rac"]),
    texts,
)
numbers = st.one_of(st.none(), st.integers(0, 100), st.floats(0, 100, allow_nan=False))


@st.composite
def molecules(draw: st.DrawFn) -> dict[str, Any]:
    """spec 7.2: an item with `content` (a name) and `SMILES`; either may be left out, and
    fields beyond these are kept."""
    item: dict[str, Any] = {}
    if draw(st.booleans()):
        item["content"] = draw(texts)
    if draw(st.booleans()):
        item["SMILES"] = draw(texts)
    if draw(st.integers(0, 4)) == 0:
        item["note"] = draw(texts)
    return item


# docs: a condition value is a list of {content, SMILES} items (a plain text is also shown)
condition_values = st.one_of(st.lists(molecules(), max_size=2), texts)
conditions = st.dictionaries(condition_keys, condition_values, max_size=3)


@st.composite
def references(draw: st.DrawFn) -> dict[str, Any]:
    """docs: `{"conditions": {...}, "yield": y, "scores": {...}}`, or a flat condition dict with
    the outcome keys beside the condition keys."""
    outcome = draw(st.dictionaries(st.sampled_from(["yield", "ee", "dr"]), notations, max_size=2))
    if draw(st.booleans()):
        group: dict[str, Any] = {"conditions": draw(conditions), **outcome}
        if draw(st.booleans()):
            group["scores"] = draw(st.dictionaries(st.sampled_from(["yield", "er"]), notations))
        if draw(st.booleans()):
            group["label"] = draw(texts)  # beyond the spec: kept
        return group
    return {**draw(conditions), **outcome}


@st.composite
def inputs(draw: st.DrawFn, question_type: str) -> dict[str, Any]:
    """spec 7.2: `input`; fixed conditions for the single_varying family only, references for
    the `*_reference` types only."""
    inp: dict[str, Any] = {
        "reactants": draw(st.lists(molecules(), max_size=2)),
        "products": draw(st.lists(molecules(), max_size=2)),
    }
    if draw(st.booleans()):
        inp["constant_conditions"] = draw(conditions)
    if single(question_type):
        inp["fixed_conditions"] = draw(st.one_of(conditions, st.none()))
    elif draw(st.booleans()):
        inp["fixed_conditions"] = None
    if reference(question_type):
        inp["reference_conditions"] = draw(st.lists(references(), min_size=1, max_size=3))
    elif draw(st.booleans()):
        inp["reference_conditions"] = draw(st.sampled_from([None, []]))
    if draw(st.integers(0, 3)) == 0:
        inp["reaction_smiles"] = draw(texts)  # beyond the spec: kept
    return inp


def aligned(values: st.SearchStrategy[Any], n: int) -> st.SearchStrategy[list[Any]]:
    return st.lists(values, min_size=n, max_size=n)


@st.composite
def metas(draw: st.DrawFn, n: int) -> dict[str, Any]:
    """spec 7.3: `meta`, its lists aligned with the ``n`` options."""
    source_entry = st.fixed_dictionaries(
        {"row_index": st.integers(0, 9), "entry_idx": texts, "rxn_id": texts}
    )
    outcome = st.dictionaries(st.sampled_from(["yield", "ee", "dr", "er", "rr"]), notations)
    meta: dict[str, Any] = {
        "yields": draw(aligned(notations, n)),
        "effective_scores": draw(aligned(numbers, n)),
        "scores": draw(aligned(outcome, n)),
        "option_relative_scores": draw(aligned(numbers, n)),
        "option_source_entries": draw(aligned(st.one_of(st.none(), source_entry), n)),
    }
    for name in draw(st.lists(st.sampled_from(OPTIONAL_META), unique=True, max_size=4)):
        meta[name] = draw(st.one_of(numbers, texts))
    return meta


@st.composite
def questions(draw: st.DrawFn, question_type: str, number: int) -> dict[str, Any]:
    """One question of ``question_type`` as spec section 7 describes it."""
    n = draw(st.integers(1, 6))
    question: dict[str, Any] = {
        "id": f"{draw(names)}_q{number}{SUFFIX[question_type]}",
        "question_type": question_type,
    }
    if single(question_type):
        question["target_key"] = draw(condition_keys)
    elif draw(st.booleans()):
        question["target_key"] = None
    if draw(st.booleans()):
        question["varying_keys"] = draw(st.lists(condition_keys, max_size=3))
    question["input"] = draw(inputs(question_type))
    question["options"] = draw(aligned(conditions, n))
    question["answer"] = draw(
        st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True)  # ties possible
    )
    question["meta"] = draw(metas(n))
    if draw(st.integers(0, 3)) == 0:
        question["builder_version"] = draw(texts)  # beyond the spec: kept
    return question


@st.composite
def files(draw: st.DrawFn) -> list[dict[str, Any]]:
    """1-3 questions of one type, with distinct ids."""
    question_type = draw(st.sampled_from(TYPES))
    count = draw(st.integers(1, 3))
    return [draw(questions(question_type, number)) for number in range(count)]


# --- the boundaries, written out ----------------------------------------------------------------


def minimal(question_type: str, number: int = 1) -> dict[str, Any]:
    """The shortest question the spec allows: one option, an answer of one index, every optional
    field left out, the shortest texts."""
    inp: dict[str, Any] = {"reactants": [], "products": []}
    if reference(question_type):
        inp["reference_conditions"] = [{"conditions": {}}]
    question: dict[str, Any] = {
        "id": f"a_q{number}{SUFFIX[question_type]}",
        "question_type": question_type,
        "input": inp,
        "options": [{}],
        "answer": [0],
        "meta": {name: [{}] if name == "scores" else [None] for name in ALIGNED},
    }
    if single(question_type):
        question["target_key"] = "k"
    return question


def full(question_type: str, number: int = 2) -> dict[str, Any]:
    """A question with every optional field given (null where the spec allows null), ties in
    `answer`, and fields beyond the spec's at every level."""
    item = {"content": "toluene", "SMILES": "Cc1ccccc1", "role": "solvent"}
    question = minimal(question_type, number)
    question.update(
        target_key="ligand" if single(question_type) else None,
        varying_keys=["ligand"],
        options=[{"ligand": [item]}, {"ligand": "L2"}, {"ligand": []}],
        answer=[0, 2],
        note={"kept": True},
    )
    inp = question["input"]
    inp.update(
        reactants=[{"content": "", "SMILES": ""}, {"SMILES": "C"}, {"content": "x"}],
        products=[{"content": "p", "SMILES": "CC", "main": True}],
        constant_conditions={"solvents": [item], "reaction_temperature": "rt"},
        fixed_conditions={"reagents": [item]} if single(question_type) else None,
        extra_input=[1],
    )
    if reference(question_type):
        inp["reference_conditions"] = [
            {"conditions": {"ligand": "L9"}, "yield": 59.0, "scores": {"ee": 90}, "tag": 1},
            {"ligand": [item], "yield": "12%", "effective_score": 10.0},
        ]
    else:
        inp["reference_conditions"] = None
    question["meta"] = {
        "yields": [80, "75%", None],
        "effective_scores": [80.0, 75, None],
        "scores": [{"yield": 80, "ee": None, "dr": "10:1"}, {"yield": "75%"}, {}],
        "option_relative_scores": [1.0, 0.9375, None],
        "option_source_entries": [{"row_index": 0, "entry_idx": "0", "rxn_id": "r"}, None, 3],
        **{name: None for name in OPTIONAL_META},
        "doi": "10_1000_x",
        "extra_meta": "kept",
    }
    return question


def variant(question_type: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    question = minimal(question_type)
    change(question)
    return question


BOUNDARIES: list[list[dict[str, Any]]] = [
    *([minimal(t)] for t in TYPES),
    *([full(t)] for t in TYPES),
    [minimal("single_varying", 0), full("single_varying", 1)],
    [variant("all_varying", lambda q: q.update(target_key=None, varying_keys=[]))],
    [variant("single_varying", lambda q: q["input"].update(fixed_conditions=None))],
    [variant("single_varying", lambda q: q["input"].update(constant_conditions={}))],
    [variant("all_varying", lambda q: q["input"].update(reference_conditions=[]))],
    [variant("single_varying_reference", lambda q: q["input"].update(
        reference_conditions=[{"yield": 5}]))],
    [variant("all_varying", lambda q: q.update(
        options=[{}] * 12, answer=[11],
        meta={name: [{}] * 12 if name == "scores" else [0] * 12 for name in ALIGNED}))],
    [variant("all_varying", lambda q: q.update(id="t_1_q12_x_q0"))],
]


def examples(argument: str, cases: list[Any]) -> Callable[[Any], Any]:
    def decorate(test: Any) -> Any:
        for case in reversed(cases):
            test = example(**{argument: case})(test)
        return test

    return decorate


# --- loading a file -----------------------------------------------------------------------------


def _load(question_list: list[dict[str, Any]], question_type: str, suffix: str) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"multiple_choice_{question_type}{suffix}"
        if suffix == ".jsonl":
            path.write_text("".join(json.dumps(q) + "\n" for q in question_list), "utf-8")
        else:
            path.write_text(json.dumps(question_list, ensure_ascii=False, indent=1), "utf-8")
        spec = load_task(f"reaction_mc/{question_type}")
        root = data_root_for(spec, {"reaction_mc": folder})
        return load_dataset(spec, None, root, cache=False)


def _expected_input(raw: dict[str, Any]) -> dict[str, Any]:
    """The sample's `input.input`: the file's, null fields left out, absent ones at the spec's
    defaults, references in their nested form."""
    out = {"constant_conditions": {}, **{k: v for k, v in raw.items() if v is not None}}
    for part in ("reactants", "products"):
        out[part] = [{"content": "", "SMILES": "", **item} for item in raw[part]]
    if "reference_conditions" in out:
        out["reference_conditions"] = [
            group.get("conditions", {k: v for k, v in group.items() if k not in OUTCOME_KEYS})
            for group in out["reference_conditions"]
        ]
    return out


SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@SETTINGS
@examples("question_list", BOUNDARIES)
@given(question_list=files())
def test_questions_written_as_the_spec_says_are_accepted(question_list: list[dict[str, Any]]):
    raw = copy.deepcopy(question_list)
    for suffix in (".json", ".jsonl"):
        dataset = _load(question_list, raw[0]["question_type"], suffix)
        assert dataset.info["checks"] == "run" and dataset.info["questions"] == len(raw)
        assert [s.id for s in dataset.samples] == [q["id"] for q in raw]
        for sample, question in zip(dataset.samples, raw, strict=True):
            assert sample.gold == question["answer"]
            assert sample.input["question_type"] == question["question_type"]
            assert sample.input["target_key"] == question.get("target_key")
            assert sample.input["varying_keys"] == question.get("varying_keys", [])
            assert sample.input["options"] == question["options"]
            inp = dict(sample.input["input"])
            if "reference_conditions" in inp:
                inp["reference_conditions"] = [g["conditions"] for g in inp["reference_conditions"]]
            assert inp == _expected_input(question["input"])
            release = sample.meta["release"]
            for name in ("yields", "effective_scores", "scores", "option_relative_scores", "doi"):
                assert release[name] == question["meta"].get(name)


# --- one rule broken at one field ------------------------------------------------------------

OTHER_TYPE = {  # a type whose other rules the question still meets
    "single_varying": "single_varying_reference_control",
    "single_varying_reference_control": "single_varying",
    "all_varying": "all_varying_reference_control",
    "all_varying_reference_control": "all_varying",
    "single_varying_reference": "all_varying_reference",
}
Change = Callable[[dict[str, Any]], None]
ANY: Callable[[str], bool] = lambda question_type: True  # noqa: E731
TARGET_KEY = "a single_varying question needs a target_key"
REFERENCES = "a reference question needs input.reference_conditions"


def _suffix_of_another_type(question: dict[str, Any]) -> None:
    own = SUFFIX[question["question_type"]]
    question["id"] = question["id"].removesuffix(own) + ("" if own else "_ref")


# name: (the question types it applies to, the change, how the error message starts, with
# {question_type} the file's)
BREAKERS: dict[str, tuple[Callable[[str], bool], Change, str]] = {
    "no options": (ANY, lambda q: q.update(options=[]),
                   "options: List should have at least 1 item"),
    "an option not an object": (ANY, lambda q: q["options"].__setitem__(0, "L1"), "options.0: "),
    "answer empty": (ANY, lambda q: q.update(answer=[]),
                     "answer: Value should have at least 1 item"),
    "answer past the options": (ANY, lambda q: q["answer"].append(len(q["options"])),
                                "answer index "),
    "answer negative": (ANY, lambda q: q.update(answer=[-1]), "answer index -1 is outside"),
    "answer a bool": (ANY, lambda q: q.update(answer=[True]), "answer: answer must be a list"),
    "answer a float": (ANY, lambda q: q.update(answer=[0.0]), "answer: answer must be a list"),
    "answer a text": (ANY, lambda q: q.update(answer="0"), "answer: "),
    "question_type unknown": (ANY, lambda q: q.update(question_type="mixed"), "question_type: "),
    "question_type of another file": (
        lambda t: t in OTHER_TYPE,
        lambda q: q.update(question_type=OTHER_TYPE[q["question_type"]]),
        "question_type '",
    ),
    "id of another pattern": (ANY, lambda q: q.update(id=q["id"].replace("_q", "-")),
                              "id does not match"),
    "id suffix of another type": (ANY, _suffix_of_another_type, "id suffix '"),
    "no target_key": (single, lambda q: q.pop("target_key"), TARGET_KEY),
    "target_key null": (single, lambda q: q.update(target_key=None), TARGET_KEY),
    "target_key empty": (single, lambda q: q.update(target_key=""), TARGET_KEY),
    "target_key a number": (ANY, lambda q: q.update(target_key=3), "target_key: "),
    "varying_keys not texts": (ANY, lambda q: q.update(varying_keys=[1]), "varying_keys.0: "),
    "no references": (reference, lambda q: q["input"].pop("reference_conditions"), REFERENCES),
    "references empty": (reference, lambda q: q["input"].update(reference_conditions=[]),
                         REFERENCES),
    "references where none belong": (
        lambda t: not reference(t),
        lambda q: q["input"].update(reference_conditions=[{"conditions": {}, "yield": 1}]),
        "a {question_type} question must not carry references",
    ),
    "no input": (ANY, lambda q: q.pop("input"), "input: Field required"),
    "no reactants": (ANY, lambda q: q["input"].pop("reactants"),
                     "input.reactants: Field required"),
    "no products": (ANY, lambda q: q["input"].pop("products"), "input.products: Field required"),
    "a reactant not an object": (ANY, lambda q: q["input"]["reactants"].append("CCO"),
                                 "input.reactants."),
    "a product name not a text": (ANY, lambda q: q["input"]["products"].append({"content": 3}),
                                  "input.products."),
    "constant_conditions not an object": (
        ANY, lambda q: q["input"].update(constant_conditions=[]), "input.constant_conditions: "
    ),
    "fixed_conditions a text": (ANY, lambda q: q["input"].update(fixed_conditions="x"),
                                "input.fixed_conditions: "),
    "no meta": (ANY, lambda q: q.pop("meta"), "meta: Field required"),
    **{
        f"meta.{name} missing": (ANY, lambda q, n=name: q["meta"].pop(n),
                                 f"meta.{name}: Field required")
        for name in ALIGNED
    },
    **{
        f"meta.{name} one entry short": (ANY, lambda q, n=name: q["meta"][n].pop(),
                                         f"meta.{name} has ")
        for name in ALIGNED
    },
    **{
        f"meta.{name} one entry long": (ANY, lambda q, n=name: q["meta"][n].append({}),
                                        f"meta.{name} has ")
        for name in ALIGNED
    },
    "meta.scores entry not an object": (ANY, lambda q: q["meta"]["scores"].__setitem__(0, 80),
                                        "meta.scores.0: "),
}


@st.composite
def broken_files(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int, str]:
    question_list = draw(files())
    position = draw(st.integers(0, len(question_list) - 1))
    question_type = question_list[0]["question_type"]
    fitting = [name for name, (fits, _, _) in BREAKERS.items() if fits(question_type)]
    return question_list, position, draw(st.sampled_from(fitting))


def _broken_examples() -> list[tuple[list[dict[str, Any]], int, str]]:
    """Every rule broken in the shortest question of a type it applies to, and in the second
    question of a file whose first one is valid."""
    out = []
    for name, (fits, _, _) in BREAKERS.items():
        question_type = next(t for t in TYPES if fits(t))
        out.append(([minimal(question_type)], 0, name))
        out.append(([full(question_type, 0), full(question_type, 1)], 1, name))
    return out


@SETTINGS
@examples("case", _broken_examples())
@given(case=broken_files())
def test_a_question_breaking_one_rule_is_rejected_with_its_place(
    case: tuple[list[dict[str, Any]], int, str],
) -> None:
    question_list, position, name = case
    question_list = copy.deepcopy(question_list)
    question_type = question_list[0]["question_type"]  # the file's
    _, change, message = BREAKERS[name]
    change(question_list[position])
    qid = question_list[position]["id"]
    for suffix, place in ((".json", f"[#{position}]"), (".jsonl", f":{position + 1}")):
        with pytest.raises(BenchregError) as info:
            _load(question_list, question_type, suffix)
        text = info.value.message
        where = f"multiple_choice_{question_type}{suffix}{place} (question {qid}): "
        assert where + message.format(question_type=question_type) in text, (name, text)
