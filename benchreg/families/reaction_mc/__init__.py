"""Reaction-condition multiple choice (V6): 6 question types, relative-score metrics.

Components: loader `reaction_mc_questions`, answer schema `reaction_mc_option`, parser
`reaction_mc_option_index`, prediction reader `reaction_mc_json`, metrics
`reaction_mc_relative_score` / `reaction_mc_exact_match` / `reaction_mc_yield_ratio`, counter
`reaction_mc`, prompt renderer `reaction_mc`, baseline `reaction_mc_nearest_reference`, validator
`reaction_mc_consistency`, analysis `reaction_mc_reference_gain`. The builder (condition table ->
the 6 question files) is `python -m benchreg.families.reaction_mc.build`.
"""

from benchreg.core.family import register_family
from benchreg.families.reaction_mc import (  # noqa: F401  (modules register their components)
    analysis,
    answer,
    baseline,
    loader,
    metrics,
    parser,
    predictions,
    prompts,
    validate,
)

# A V6 directory keeps its prompt_<type>.txt beside the data files.
register_family("reaction_mc", __file__, release_prompts=".")
