"""Model text -> retrieval answer: the last JSON object with `results` (reasoning and code fences
before it are tolerated), or a bare JSON list of results."""

from __future__ import annotations

import json
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.text import last_object_with, strip_reasoning
from benchreg.core.types import Sample


@registry.parsers.register("retrieval_json")
def parse_results(text: str, sample: Sample) -> Any:
    found = last_object_with(text, "results")
    if found is not None:
        return found
    body = strip_reasoning(text).strip().removeprefix("```json").strip("`").strip()
    if body.startswith("["):
        try:
            return {"results": json.loads(body)}
        except json.JSONDecodeError as exc:
            raise ParseError(f"malformed JSON list ({exc.msg})") from None
    raise ParseError("no JSON object with 'results' and no JSON list of results")
