"""The MolP2S answer: a 0-based index into `candidate_completed_smiles`, which a reply states as
`{"selected_candidate_index": <index>}` (the object the prompt asks for and the parser reads;
also the JSON Schema that `model.structured=json_schema` sends, bounded by the candidates)."""

from benchreg.core import registry
from benchreg.core.index_answer import IndexInto

registry.answer_schemas.add(
    "candidate_index",
    IndexInto("candidate_completed_smiles", "candidate index", "selected_candidate_index"),
)
