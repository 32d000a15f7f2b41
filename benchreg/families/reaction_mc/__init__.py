"""Reaction-condition multiple choice (V6): 6 question types, relative-score metrics.

Components (module: registered name):
- loader: loader `reaction_mc_questions` (question records in records.py);
- answer: answer schema `reaction_mc_option`;
- parser: parser `reaction_mc_option_index`;
- predictions: prediction reader `reaction_mc_json`;
- prompts: prompt renderer `reaction_mc`;
- metrics: metric `reaction_mc_scores` (avg_relative_score, exact_match_accuracy,
  avg_yield_ratio) and counter `reaction_mc`;
- baseline: baseline `reaction_mc_nearest_reference`;
- validators: validator `reaction_mc_consistency`;
- analysis: analysis `reaction_mc_reference_gain`.
Domain modules: effective (the effective score), notation (outcome notations), conditions
(condition groups), sharing (equal parts of a file as one object). The builder (condition
table -> the 6 question files) is `python -m benchreg.families.reaction_mc.build`.
"""

from benchreg.core.registry import register_family

# A V6 directory keeps its prompt_<type>.txt beside the data files.
register_family(__name__, __file__, release_prompts=".")
