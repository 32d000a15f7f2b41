"""Model text -> MolP2S answer (the JSON object the prompt asks for)."""

from __future__ import annotations

import json
import re
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.types import Sample

KEY = "selected_candidate_index"
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object embedded in ``text`` (code fences and prose around it are ignored)."""
    decoder = json.JSONDecoder()
    found, pos = [], 0
    while (start := text.find("{", pos)) != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            found.append(obj)
        pos = end
    return found


@registry.parsers.register("molp2s_json")
def parse_selection(text: str, sample: Sample) -> int:
    """The last JSON object with `selected_candidate_index` wins (reasoning may come first)."""
    objects = [o for o in json_objects(_THINK.sub("", text)) if KEY in o]
    if not objects:
        raise ParseError(f"no JSON object with {KEY!r}")
    value = objects[-1][KEY]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseError(f"{KEY} is not an integer: {value!r}")
    return value
