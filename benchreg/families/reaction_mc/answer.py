"""The answer: one 0-based option index (an int, never a bool, never a float or a string).

The prompt asks for the bare integer; as a JSON Schema (`model.structured=json_schema`) and for
option probabilities (`model.scoring=logprobs`) the reply is `{"answer": <index>}`, which the
parser reads as given (a reply that is one JSON object holding the index), bounded by the
options. A JSON object, not a bare integer: OpenAI's strict `json_schema` wants an object at
the root, and its closing brace ends a multi-digit index."""

from benchreg.core import registry
from benchreg.core.index_answer import IndexInto

registry.answer_schemas.add("reaction_mc_option", IndexInto("options", "option index", "answer"))
