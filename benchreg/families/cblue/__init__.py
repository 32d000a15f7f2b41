"""PromptCBLUE: 16 Chinese medical tasks as text prompts, scored with the official semantics.

Components: loader `cblue` (param `task`: the entry's PromptCBLUE task); answer schemas
`cblue_entities`, `cblue_triples`, `cblue_events`, `cblue_normalizations`, `cblue_entity_attrs`,
`cblue_label`, `cblue_reply`, `cblue_report`; one parser per task (`cblue_cmeee_v2`, ...,
`cblue_imcs_v2_sr`); metrics `cblue_micro_prf`, `cblue_label_prf`, `cblue_reply_rouge`,
`cblue_report_rouge` and counter `cblue`; prediction reader `cblue`; prompt renderer
`cblue_input`; baseline `cblue_trivial`; analysis `cblue_overall` (overall score + results.json);
validator `cblue_gold`. Domain modules: catalogue (task facts the entries do not state), official
(the official score computations), rouge and tokenizer, formats (answer -> target text);
records (the rules of a split line), split and gold (the two data files, read through the
loading door).
User docs: docs/cblue.md.
"""

from benchreg.core.registry import register_family

# The prompt is each row's own `input`: no template files.
register_family(__name__, __file__, release_prompts=None, packages=("rouge-chinese",))
