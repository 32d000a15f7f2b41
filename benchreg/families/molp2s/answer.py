"""The MolP2S answer: a 0-based index into `candidate_completed_smiles`."""

from benchreg.core import registry
from benchreg.core.index_answer import IndexInto

registry.answer_schemas.add(
    "candidate_index", IndexInto("candidate_completed_smiles", "candidate index")
)
