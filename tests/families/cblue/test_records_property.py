"""The rules of a PromptCBLUE split line, from the spec (../shared/specs/README.md section 2 and
001, "Inputs"; docs/cblue.md, "Data root and splits"), against the real loader.

A line of `<split>.json` is a JSON object with `input` (the prompt), `target` (the gold text,
empty in a test split), `task_dataset` (the task: one of the 16, CMeIE-V2 for CMeIE, or a task
outside them, whose lines are ignored) and `sample_id`, all strings; `answer_choices` is a list
of strings (possibly empty), null or absent; `task_type` a string, null or absent; other fields
are allowed. The lines here are generated from those sentences, not from the pydantic type in
records.py: every line set they allow must load, and a line changed at one field to break one
rule must be rejected with an error naming its file:line. Each rule's boundary is an explicit
example.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchreg import BenchregError, load_task
from benchreg.core.errors import at
from benchreg.core.pipeline import load_dataset
from benchreg.core.types import Dataset
from tests.strategies import json_values

STRING_FIELDS = ("input", "target", "task_dataset", "sample_id")
OPTIONAL_FIELDS = ("answer_choices", "task_type")
# the tasks loaded here (any text is a target their parsers read), their other names, and tasks
# outside the 16
LOADED = ("KUAKE-IR", "CMeIE", "MedDG")
TASK_NAMES = ("KUAKE-IR", "CMeIE", "CMeIE-V2", "MedDG", "CHIP-CTC", "Text2DT", "CMedCausal")
ALIAS = {"CMeIE-V2": "CMeIE"}

texts = st.text(max_size=8)
extras = st.dictionaries(
    st.text(min_size=1, max_size=6).filter(lambda k: k not in STRING_FIELDS + OPTIONAL_FIELDS),
    json_values,
    max_size=2,
)
ABSENT = object()


@st.composite
def lines(draw: st.DrawFn) -> dict[str, Any]:
    drawn = {
        "input": draw(texts),
        "target": draw(texts),
        "task_dataset": draw(st.sampled_from(TASK_NAMES)),
        "sample_id": draw(texts),
        **draw(extras),
    }
    choices = draw(st.just(ABSENT) | st.none() | st.lists(texts, max_size=4))
    task_type = draw(st.just(ABSENT) | st.none() | texts)
    for name, value in (("answer_choices", choices), ("task_type", task_type)):
        if value is not ABSENT:
            drawn[name] = value
    return dict(draw(st.permutations(list(drawn.items()))))  # in any order


def _task_of(line: dict[str, Any]) -> str:
    return ALIAS.get(line["task_dataset"], line["task_dataset"])


# a task's sample_ids are its own (a repeated one is an error of its own)
splits = st.lists(
    lines(), min_size=1, max_size=6, unique_by=lambda x: (_task_of(x), x["sample_id"])
)


def line(sample_id: str = "a", **over: Any) -> dict[str, Any]:
    base = {
        "input": "医疗搜索：x\n选项: 相关，不相关\n答：",
        "target": "相关",
        "answer_choices": ["相关", "不相关"],
        "task_type": "matching",
        "task_dataset": "KUAKE-IR",
        "sample_id": sample_id,
    }
    return {**base, **over}


def without(name: str, base: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in base.items() if k != name}


SHORTEST = [line("", input="", target="", answer_choices=[], task_type="")]  # every string empty
BOUNDARIES = [
    line("none", answer_choices=None, task_type=None),
    without("answer_choices", without("task_type", line("absent"))),
    line("one", answer_choices=["相关"], source="CBLUE", note=None, n=[1, {"x": 2}]),
    line("v2", task_dataset="CMeIE-V2", target="", answer_choices=None),
    line("cmeie", task_dataset="CMeIE", target="没有指定类型的三元组"),
    line("outside", task_dataset="Text2DT", answer_choices=None, task_type=None),
    line("reply", task_dataset="MedDG", target="", answer_choices=[], task_type="dialogue"),
]


def write(folder: Path, rows: list[Any]) -> Path:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    (folder / "dev.json").write_text(text, encoding="utf-8")
    return folder / "dev.json"


def load(task: str, root: Path) -> Dataset:
    return load_dataset(load_task(f"cblue/{task}"), "dev", root, cache=False)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split=splits)
@example(split=SHORTEST)
@example(split=BOUNDARIES)
def test_every_line_the_spec_allows_is_loaded(split: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, split)
        for task in LOADED:
            mine = [(n, x) for n, x in enumerate(split, start=1) if _task_of(x) == task]
            if not mine:
                continue
            samples = load(task, root).samples
            assert [s.id for s in samples] == [x["sample_id"] for _, x in mine]
            for sample, (number, x) in zip(samples, mine, strict=True):
                assert sample.input == {
                    "prompt": x["input"],
                    "answer_choices": x.get("answer_choices"),
                    "task_type": x.get("task_type"),
                    "task_dataset": task,
                }
                assert sample.meta == {"split": "dev", "line": number, "_target": x["target"]}


NOT_STRINGS = st.none() | st.booleans() | st.integers() | st.lists(texts, max_size=2)
NOT_STRINGS |= st.dictionaries(texts, texts, max_size=2)
NOT_LISTS = st.booleans() | st.integers() | texts | st.dictionaries(texts, texts, max_size=2)
LIST_WITH_A_NON_STRING = st.tuples(
    st.lists(texts, max_size=2), st.none() | st.integers() | st.lists(texts, max_size=1)
).map(lambda t: [*t[0], t[1]])


@st.composite
def broken(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int, str, Any]:
    """A valid split with one line changed to break one rule: (lines, index, field, value),
    value ABSENT for a field taken out, field "" for a line that is not an object."""
    split = draw(splits)
    index = draw(st.integers(0, len(split) - 1))
    rule = draw(st.sampled_from(["missing", "not a string", "choices", "task_type", "line"]))
    if rule == "missing":
        return split, index, draw(st.sampled_from(STRING_FIELDS)), ABSENT
    if rule == "not a string":
        return split, index, draw(st.sampled_from(STRING_FIELDS)), draw(NOT_STRINGS)
    if rule == "choices":
        return split, index, "answer_choices", draw(NOT_LISTS | LIST_WITH_A_NON_STRING)
    if rule == "task_type":
        return split, index, "task_type", draw(NOT_LISTS.filter(lambda v: not isinstance(v, str)))
    return split, index, "", draw(st.lists(texts, max_size=2) | texts | st.integers() | st.none())


def _broken_split(split: list[dict[str, Any]], index: int, field: str, value: Any) -> list[Any]:
    rows: list[Any] = [dict(x) for x in split]
    if not field:
        rows[index] = value
    elif value is ABSENT:
        del rows[index][field]
    else:
        rows[index][field] = value
    return rows


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=broken())
@example(case=([line()], 0, "input", ABSENT))
@example(case=([line(), line("b")], 1, "sample_id", 7))
@example(case=([line()], 0, "target", None))
@example(case=([line()], 0, "task_dataset", ["KUAKE-IR"]))
@example(case=([line()], 0, "answer_choices", "相关，不相关"))
@example(case=([line()], 0, "answer_choices", ["相关", 1]))
@example(case=([line()], 0, "task_type", 3))
@example(case=([line(), line("b")], 1, "", ["not", "an object"]))
@example(case=([line(task_dataset="Text2DT")], 0, "input", 1))  # a line of an ignored task
def test_a_line_breaking_one_rule_is_rejected_at_its_line(case: tuple) -> None:
    split, index, field, value = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = write(root, _broken_split(split, index, field, value))
        try:
            load("KUAKE-IR", root)
        except BenchregError as exc:
            assert exc.where == at(path, index + 1), exc.message
            assert (field or "JSON object") in exc.what, exc.message
        else:
            raise AssertionError(f"line {index + 1} with {field or 'the line'} = {value!r} loaded")
