"""Building the 6 question types from source tables (builder, step 2), following the spec.

- single_varying (spec 4.1): for each varying key K of a table, group the experiments by the
  values of the other varying keys; the group covering the most values of K (ties: seeded choice)
  gives `fixed_conditions`, and its experiments (one per value of K) are the options.
- all_varying: the table's experiments (a seeded sample of `all_varying_max_options` when there
  are more) are the options; keys constant over them join `constant_conditions`.
- references (spec 9), tried for every base question: 2-5 groups drawn (seeded) from the
  low-to-mid range — the lowest floor(fraction x n) experiments of the ranking frame, never one
  tied with the frame's top score and never better than the best option. The frame is the
  question's option set for all_varying (references are then removed from the options; at least
  `min_remaining_all_varying` must remain) and the whole source table for single_varying
  (references are experiments outside the option set, so never an option + fixed combination).
- `*_reference_control`: the reference question's options without references; only when the
  reference question was generated. single_varying controls keep the base question's order.
Ids: `{table_id}_q{N}` numbered per table (single_varying questions first, in config key
order, then all_varying), plus `_ref` / `_ref_control`.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchreg.families.reaction_mc.build.config import BuildConfig, QuestionSettings
from benchreg.families.reaction_mc.build.table import Experiment, SourceTable
from benchreg.families.reaction_mc.conditions import condition_signature
from benchreg.families.reaction_mc.effective import best_indices, is_tie, relative
from benchreg.families.reaction_mc.records import QUESTION_TYPES

Question = dict[str, Any]


@dataclass(slots=True)
class BuildStats:
    tables: int = 0
    tables_used: int = 0
    questions: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    reference_attempts: int = 0
    reference_generated: int = 0
    reference_skipped: Counter[str] = field(default_factory=Counter)

    def as_json(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "tables_used": self.tables_used,
            "questions": {t: self.questions.get(t, 0) for t in QUESTION_TYPES},
            "questions_total": sum(self.questions.values()),
            "skipped_questions": dict(self.skipped),
            "reference_attempts": self.reference_attempts,
            "reference_generated": self.reference_generated,
            "reference_skipped": dict(self.reference_skipped),
        }


def _signature_of(exp: Experiment, keys: Sequence[str]) -> Any:
    return condition_signature({k: exp.conditions[k] for k in keys})


def _varying_keys(experiments: Sequence[Experiment], keys: Sequence[str]) -> list[str]:
    return [k for k in keys if len({_signature_of(e, [k]) for e in experiments}) > 1]


def _round(value: float) -> float:
    return round(value, 6)


class TableBuilder:
    """All questions of one source table."""

    def __init__(
        self, config: BuildConfig, table: SourceTable, rng: random.Random, stats: BuildStats
    ) -> None:
        self.config = config
        self.settings: QuestionSettings = config.questions
        self.table = table
        self.rng = rng
        self.stats = stats
        self.keys = [c.key for c in config.conditions]
        self.exps = table.experiments
        self.table_top = max((e.effective for e in self.exps), default=0.0)
        self.number = 0
        self.out: dict[str, list[Question]] = {t: [] for t in QUESTION_TYPES}

    # --- question assembly -------------------------------------------------------------------

    def _meta(self, options: Sequence[Experiment]) -> dict[str, Any]:
        effective = [e.effective for e in options]
        best_eff = max(effective)
        best = best_indices(effective)
        table_best = best_indices([e.effective for e in self.exps])
        return {
            "yields": [e.yield_ for e in options],
            "effective_scores": [_round(v) for v in effective],
            "scores": [dict(e.scores) for e in options],
            "option_relative_scores": [_round(relative(v, best_eff)) for v in effective],
            "option_source_entries": [self._entry(e) for e in options],
            "best_yield": max(e.yield_ for e in options),
            "best_effective_score": _round(best_eff),
            "best_entry_indices": [options[i].row_index for i in best],
            "global_best_yield": max(e.yield_ for e in self.exps),
            "global_best_effective_score": _round(self.table_top),
            "global_best_entry_indices": [self.exps[i].row_index for i in table_best],
            "doi": self.table.doi,
            "source_file": self.config.source_file or self.config.table.rsplit("/", 1)[-1],
            "parent_table_id": self.table.table_id,
            "main_product_smiles": self.table.products[0]["SMILES"],
            "total_entries_in_source_table": self.table.total_rows,
        }

    def _entry(self, exp: Experiment) -> dict[str, Any]:
        return {"row_index": exp.row_index, "entry_idx": str(exp.line),
                "rxn_id": self.table.reaction_id}

    def _question(
        self,
        qid: str,
        qtype: str,
        options: Sequence[Experiment],
        option_keys: Sequence[str],
        constant: dict[str, Any],
        *,
        target_key: str | None = None,
        varying: Sequence[str] = (),
        fixed: dict[str, Any] | None = None,
        references: Sequence[Experiment] | None = None,
    ) -> Question:
        inp: dict[str, Any] = {
            "reactants": self.table.reactants,
            "products": self.table.products,
            "constant_conditions": constant,
        }
        if fixed is not None:
            inp["fixed_conditions"] = fixed
        if references is not None:
            inp["reference_conditions"] = [self._reference(e) for e in references]
        return {
            "id": qid,
            "question_type": qtype,
            "target_key": target_key,
            "varying_keys": list(varying),
            "input": inp,
            "options": [{k: e.conditions[k] for k in option_keys} for e in options],
            "answer": best_indices([e.effective for e in options]),
            "meta": self._meta(options),
        }

    def _reference(self, exp: Experiment) -> dict[str, Any]:
        conditions = {**self.config.constant_conditions, **exp.conditions}
        return {
            "conditions": dict(sorted(conditions.items())),
            "yield": exp.yield_,
            "scores": dict(exp.scores),
            "effective_score": _round(exp.effective),
            "source_entry": self._entry(exp),
        }

    def _constants(self, experiments: Sequence[Experiment], keys: Sequence[str]) -> dict[str, Any]:
        first = experiments[0]
        constant = {k: first.conditions[k] for k in keys}
        return dict(sorted({**self.config.constant_conditions, **constant}.items()))

    def _shuffled(self, items: Sequence[Experiment]) -> list[Experiment]:
        out = list(items)
        self.rng.shuffle(out)
        return out

    def _informative(self, options: Sequence[Experiment]) -> bool:
        return not (self.settings.skip_all_zero and max(e.effective for e in options) <= 0)

    # --- references ------------------------------------------------------------------------

    def _low_mid(self, frame: Sequence[Experiment]) -> list[Experiment]:
        ranked = sorted(frame, key=lambda e: (e.effective, e.row_index))
        top = max(e.effective for e in frame)
        cut = math.floor(self.settings.reference_low_mid_fraction * len(ranked))
        return [e for e in ranked[:cut] if not is_tie(e.effective, top) and e.effective < top]

    def _draw_references(
        self, candidates: Sequence[Experiment], frame: Sequence[Experiment], best: float,
        cap: int | None,
    ) -> tuple[list[Experiment] | None, str | None]:
        s = self.settings
        self.stats.reference_attempts += 1
        if cap is not None and cap < s.min_reference:
            return None, "not_enough_effective_options"
        if not candidates:
            return None, "no_reference_candidate"
        allowed = {id(e) for e in candidates}
        low_mid = [e for e in self._low_mid(frame) if id(e) in allowed]
        eligible = [e for e in low_mid if e.effective <= best or is_tie(e.effective, best)]
        if not eligible:
            return None, "no_non_top_score_group"
        most = min(s.max_reference, len(eligible), cap if cap is not None else len(eligible))
        if most < s.min_reference:
            return None, "not_enough_reference_candidates"
        chosen = self.rng.sample(eligible, self.rng.randint(s.min_reference, most))
        return sorted(chosen, key=lambda e: (e.effective, e.row_index)), None

    def _note_reference(self, refs: list[Experiment] | None, reason: str | None) -> bool:
        if refs is None:
            self.stats.reference_skipped[reason or "unknown"] += 1
            return False
        self.stats.reference_generated += 1
        return True

    # --- question types ------------------------------------------------------------------------

    def single_varying(self, varying: list[str], target: str) -> None:
        others = [k for k in varying if k != target]
        groups: dict[Any, list[Experiment]] = {}
        for exp in self.exps:
            groups.setdefault(_signature_of(exp, others), []).append(exp)
        coverage = {key: len({_signature_of(e, [target]) for e in g}) for key, g in groups.items()}
        most = max(coverage.values())
        if most < self.settings.single_varying_min_options:
            self.stats.skipped["single_varying_too_few_options"] += 1
            return
        tied = [key for key in groups if coverage[key] == most]
        options = list(groups[self.rng.choice(tied)])
        limit = self.settings.single_varying_max_options
        if limit and len(options) > limit:
            options = self.rng.sample(options, limit)
        if not self._informative(options):
            self.stats.skipped["all_zero"] += 1
            return
        self.number += 1
        qid = f"{self.table.table_id}_q{self.number}"
        constant = self._constants(self.exps, [k for k in self.keys if k not in varying])
        fixed = {k: options[0].conditions[k] for k in sorted(others)}
        common = {"target_key": target, "varying": varying, "fixed": fixed}
        base = self._shuffled(options)
        self._add(self._question(qid, "single_varying", base, [target], constant, **common))
        outside = [e for e in self.exps if all(e is not o for o in options)]
        best = max(e.effective for e in options)
        refs, reason = self._draw_references(outside, self.exps, best, None)
        if not self._note_reference(refs, reason):
            return
        self._add(self._question(f"{qid}_ref", "single_varying_reference",
                                 self._shuffled(options), [target], constant, references=refs,
                                 **common))
        self._add(self._question(f"{qid}_ref_control", "single_varying_reference_control", base,
                                 [target], constant, **common))

    def all_varying(self, varying: list[str], seen: set[Any]) -> None:
        limit = self.settings.all_varying_max_options
        pool = self.exps
        options = list(pool) if not limit or len(pool) <= limit else self.rng.sample(pool, limit)
        key = frozenset(id(e) for e in options)
        if key in seen:
            return
        seen.add(key)
        keys_here = _varying_keys(options, varying)
        if len(options) < self.settings.all_varying_min_options or not keys_here:
            self.stats.skipped["all_varying_too_few_options"] += 1
            return
        if not self._informative(options):
            self.stats.skipped["all_zero"] += 1
            return
        self.number += 1
        qid = f"{self.table.table_id}_q{self.number}"
        constant = self._constants(options, [k for k in self.keys if k not in keys_here])
        self._add(self._question(qid, "all_varying", self._shuffled(options), keys_here, constant,
                                 varying=keys_here))
        best = max(e.effective for e in options)
        cap = len(options) - self.settings.min_remaining_all_varying
        refs, reason = self._draw_references(options, options, best, cap)
        if not self._note_reference(refs, reason):
            return
        remaining = [e for e in options if all(e is not r for r in refs or [])]
        common = {"varying": keys_here}
        self._add(self._question(f"{qid}_ref", "all_varying_reference", self._shuffled(remaining),
                                 keys_here, constant, references=refs, **common))
        self._add(self._question(f"{qid}_ref_control", "all_varying_reference_control",
                                 self._shuffled(remaining), keys_here, constant, **common))

    def _add(self, question: Question) -> None:
        self.out[question["question_type"]].append(question)
        self.stats.questions[question["question_type"]] += 1

    def build(self) -> dict[str, list[Question]]:
        if len(self.exps) < 2:
            self.stats.skipped["table_too_small"] += 1
            return self.out
        varying = _varying_keys(self.exps, self.keys)
        if not varying:
            self.stats.skipped["table_without_varying_conditions"] += 1
            return self.out
        for target in varying:
            self.single_varying(varying, target)
        seen: set[Any] = set()
        for _ in range(self.settings.all_varying_questions_per_table):
            self.all_varying(varying, seen)
        return self.out


def build_questions(
    config: BuildConfig, tables: Sequence[SourceTable], seed: int
) -> tuple[dict[str, list[Question]], BuildStats]:
    rng = random.Random(seed)
    stats = BuildStats(tables=len(tables))
    out: dict[str, list[Question]] = {t: [] for t in QUESTION_TYPES}
    for table in tables:
        built = TableBuilder(config, table, rng, stats).build()
        if any(built.values()):
            stats.tables_used += 1
        for qtype, questions in built.items():
            out[qtype].extend(questions)
    return out, stats
