"""The answer: one 0-based option index (an int, never a bool, never a float or a string)."""

from benchreg.core import registry
from benchreg.core.index_answer import IndexInto

registry.answer_schemas.add("reaction_mc_option", IndexInto("options", "option index"))
