"""The fast paths of the run loop write exactly what the slow ones wrote: prompts, cache keys and
digests depend on these texts byte for byte."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchreg.core.io import pretty_json, same_in_orjson, sorted_json
from benchreg.core.text import fill_template, split_reasoning
from tests.strategies import json_values

# what orjson writes otherwise: tiny, non-finite and huge numbers, odd keys and characters
awkward = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.sampled_from([1e-5, -3.2e-7, 5e-05, 1e16, 1.5e300, -0.0, 1e-4])
    | st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["\u2028", "\x7f"])),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.integers(0, 3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=400)
@given(json_values | awkward)
def test_pretty_and_sorted_json_are_the_json_modules_text(value: object) -> None:
    assert pretty_json(value) == json.dumps(value, ensure_ascii=False, indent=2)
    try:
        expected = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except TypeError:  # keys json cannot sort (a string and a number): the same error
        with pytest.raises(TypeError):
            sorted_json(value)
        return
    assert sorted_json(value) == expected


def test_what_orjson_writes_otherwise_goes_to_json() -> None:
    for value in (1e-5, float("nan"), [1, {"a": float("inf")}], {"x": [2.5e-7]}, {1, 2}):
        assert not same_in_orjson(value)
    assert same_in_orjson({"a": [1, 2.5, None, True, "é", {"b": 0.0001}], "c": ()})


def test_fill_template_is_the_same_with_its_pattern_made_once() -> None:
    values = {"name": "N", "n": "1", "name_long": "L"}
    template = '{name} {{ n }} {name_long} {other} {{name}} {"json": 1}'
    expected = 'N 1 L {other} N {"json": 1}'
    assert fill_template(template, values) == (expected, True)
    assert fill_template(template, dict(reversed(values.items()))) == (expected, True)
    assert fill_template("plain", values) == ("plain", False)


def test_a_reply_without_any_tag_skips_the_reasoning_rules() -> None:
    plain = split_reasoning('  {"a": 1} 2 > 1\n')
    assert (plain.answer, plain.reasoning, plain.unclosed) == ('{"a": 1} 2 > 1', None, False)
    tagged = split_reasoning("<think>hm</think> 3")
    assert (tagged.answer, tagged.reasoning) == ("3", "hm")
