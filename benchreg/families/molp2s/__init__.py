"""MolP2S: property-grounded structure completion (15 property directories x 3 views).

Components: loader `molp2s`, answer schema `candidate_index`, parser `molp2s_json`, prediction
reader `molp2s_jsonl`, metric `accuracy`, counter `molp2s`, prompt renderer `molp2s`, baseline
`molp2s_rdkit`, analysis `molp2s_views`.
"""

from benchreg.core.family import register_family
from benchreg.families.molp2s import (  # noqa: F401  (modules register their components)
    analysis,
    baseline,
    loader,
    metrics,
    parser,
    predictions,
    prompts,
    schema,
)

register_family("molp2s", __file__, release_prompts="prompts")
