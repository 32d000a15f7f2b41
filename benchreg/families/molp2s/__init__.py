"""MolP2S: property-grounded structure completion (15 property directories x 4 views).

Components: loader `molp2s` (loader.py, records.py), answer schema `candidate_index` (answer.py),
parser `molp2s_json` (parser.py), prediction reader `molp2s_jsonl` (predictions.py), counter
`molp2s` (metrics.py; the task scores the core's generic `accuracy`), prompt renderer `molp2s`
(prompts.py), baseline `molp2s_rdkit` (baseline.py), analysis `molp2s_views` (analysis.py).
Domain modules: chem.py (RDKit structure features), chem_checks.py (SMILES and mask checks).
"""

from benchreg.core.registry import register_family

register_family(__name__, __file__, release_prompts="prompts", packages=("rdkit",))
