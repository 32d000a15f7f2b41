"""Item keys (extraction scoring) compare equal exactly when the official JSON texts do."""

from __future__ import annotations

import json
import random

from benchreg.families.cblue.official import item_key, item_set, overlap


class Label(str):
    pass


VALUES = [
    "a",
    "1",
    "l",
    "t",
    "",
    '["a"]',
    '"a"',
    Label("a"),
    1,
    1.0,
    True,
    False,
    None,
    0,
    [],
    ["a"],
    ("a",),
    [Label("a")],
    ["a", "b"],
    ["b", "a"],
    ["a", 1],
    ["l", "a"],
    ["t", "a"],
    [["a"]],
    {"x": "a"},
    {"y": "a"},
    float("nan"),
    "中文",
    ["中文"],
]


def _official(item: dict) -> list[str]:  # type: ignore[type-arg]
    return [json.dumps(item[key], ensure_ascii=False) for key in sorted(item)]


def test_item_keys_are_equal_exactly_when_the_json_texts_are() -> None:
    rng = random.Random(0)
    names = ["entity", "type", "x", "主体词"]
    items = []
    for _ in range(3000):
        keys = rng.sample(names, rng.randint(0, 3))
        items.append({key: rng.choice(VALUES) for key in keys})
    for _ in range(30000):
        a, b = rng.choice(items), rng.choice(items)
        same = item_key(a) == item_key(b)
        assert same == (_official(a) == _official(b)), (a, b)
        if same:
            assert hash(item_key(a)) == hash(item_key(b))


def test_item_sets_ignore_key_names_and_order() -> None:
    gold = [{"entity": "x", "type": "y"}, {"type": "y", "entity": "x"}]
    assert len(item_set(gold)) == 1
    assert overlap(gold, [{"a": "x", "b": "y"}, {"entity": "y", "type": "x"}]) == (1, 1, 0)
