"""Model text -> retrieval answer: the last JSON object with `results` (reasoning and code fences
before it are tolerated), the format the prompt asks for; or, as a fallback, a reply that is only
a JSON list of results (not the requested object), flagged `degraded`.

Text with neither is a ParseError (the sample is `invalid`, scored as no results); an empty
`results` list is an answer (the prompt asks for one when the memory holds no evidence). What the
results must be (objects with `source_id` and a region, never bare numbers or ids) is the answer
schema's check (answer.py).
"""

from __future__ import annotations

import json
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.text import last_object_with, strip_reasoning
from benchreg.core.types import Degraded, Sample

BARE_LIST = "a bare JSON list of results, not the requested object with `results`"


@registry.parsers.register("retrieval_json")
def parse_results(text: str, sample: Sample) -> Any:
    found = last_object_with(text, "results")
    if found is not None:
        return found
    body = strip_reasoning(text).strip().removeprefix("```json").strip("`").strip()
    if body.startswith("["):
        try:
            return Degraded({"results": json.loads(body)}, BARE_LIST)
        except json.JSONDecodeError as exc:
            raise ParseError(f"malformed JSON list ({exc.msg})") from None
    raise ParseError("no JSON object with 'results' and no JSON list of results")
