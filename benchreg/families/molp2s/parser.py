"""Model text -> MolP2S answer (the JSON object the prompt asks for).

Only JSON is accepted: an index is never recovered from prose ("I pick candidate 2"), so no
MolP2S parse is a fallback read and none is flagged `degraded`; a reply without such an object is
invalid.
"""

from __future__ import annotations

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.text import last_object_with
from benchreg.core.types import Sample

KEY = "selected_candidate_index"


@registry.parsers.register("molp2s_json")
def parse_selection(text: str, sample: Sample) -> int:
    """The last JSON object with `selected_candidate_index` wins (reasoning may come first)."""
    found = last_object_with(text, KEY)
    if found is None:
        raise ParseError(f"no JSON object with {KEY!r}")
    value = found[KEY]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseError(f"{KEY} is not an integer: {value!r}")
    return value
