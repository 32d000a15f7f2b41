"""The consistency checks of one question (used by the `reaction_mc_consistency` validator, and by
the loader, which runs them where it builds the samples: in every load process).

For a question it recomputes, from `meta.scores` with the spec's formula, each option's effective
score, the relative scores, the best indices (ties) and the best yield/effective, and reports
every disagreement with the stored `meta` / `answer`, naming the question id; it also checks the
shape of the options and the reference rules (spec section 9) that can be seen from one question.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchreg.core.types import Sample
from benchreg.core.validation import Finding
from benchreg.families.reaction_mc.conditions import condition_signature, merged
from benchreg.families.reaction_mc.effective import QuestionScores, is_tie, number, outcome_of
from benchreg.families.reaction_mc.notation import yield_value
from benchreg.families.reaction_mc.records import base_family

DEFAULT_REL_TOL = 1e-4
DEFAULT_ABS_TOL = 1e-4  # scaled by 100 for yields and effective scores
MIN_REFERENCES = 2
MAX_REFERENCES = 5
MIN_REMAINING_ALL_VARYING = 5


class QuestionChecker:
    """Findings of one question at a time (``question``), collected in ``findings``."""

    def __init__(self, rel_tol: float, abs_tol: float) -> None:
        self.rel_tol = rel_tol
        self.abs_tol = abs_tol
        self.findings: list[Finding] = []

    def close(self, a: float, b: float, scale: float = 1.0) -> bool:
        return math.isclose(a, b, rel_tol=self.rel_tol, abs_tol=self.abs_tol * scale)

    def error(self, where: str, message: str) -> None:
        self.findings.append(Finding(where, message, "error"))

    def warn(self, where: str, message: str) -> None:
        self.findings.append(Finding(where, message, "warning"))

    def question(self, sample: Sample) -> None:
        qid = sample.id
        meta: Mapping[str, Any] = sample.meta["release"]
        formula: Mapping[str, Any] = sample.meta["formula"]
        for problem in formula.get("problems", ()):
            self.warn(qid, f"unreadable meta.scores, {problem} (metrics use "
                           f"meta.effective_scores for it)")
        scores = None
        if self._agrees(sample, meta, formula):
            if formula["best_effective"] <= 0:
                self._all_zero(qid)
        else:
            scores = QuestionScores.from_json(formula)
            self._options(qid, meta, scores)
            self._best(qid, sample, meta, scores)
        self._shape(qid, sample)
        if sample.input["question_type"].endswith("_reference"):
            self._references(qid, sample, scores or QuestionScores.from_json(formula))

    def _agrees(
        self, sample: Sample, meta: Mapping[str, Any], formula: Mapping[str, Any]
    ) -> bool:
        """Whether `_options` and `_best` would find nothing but an all-zero question: their
        checks for the common case (plain float numbers), without building QuestionScores."""
        if formula.get("fallback_options") or sample.gold != formula["best"]:
            return False
        if meta["yields"] != [(entry or {}).get("yield") for entry in meta["scores"]]:
            return False
        rel_tol, abs_tol, abs_100 = self.rel_tol, self.abs_tol, self.abs_tol * 100
        isclose = math.isclose
        for stored, value in zip(meta["effective_scores"], formula["effective"], strict=True):
            if type(stored) is not float or not isclose(
                stored, value, rel_tol=rel_tol, abs_tol=abs_100
            ):
                return False
        for stored, value in zip(meta["option_relative_scores"], formula["relative"], strict=True):
            if type(stored) is not float or not isclose(
                stored, value, rel_tol=rel_tol, abs_tol=abs_tol
            ):
                return False
        best_effective, best_yield = formula["best_effective"], formula["best_yield"]
        for key, best, at_least in (
            ("best_effective_score", best_effective, False),
            ("best_yield", best_yield, False),
            ("global_best_effective_score", best_effective, True),
            ("global_best_yield", best_yield, True),
        ):
            stored = meta.get(key)
            if stored is None:
                continue
            if type(stored) is not float or not (
                (at_least and stored >= best)
                or isclose(stored, best, rel_tol=rel_tol, abs_tol=abs_100)
            ):
                return False
        return True

    def _all_zero(self, qid: str) -> None:
        self.warn(qid, "every option has effective score 0: the question cannot tell options "
                       "apart (all count as best)")

    def _options(self, qid: str, meta: Mapping[str, Any], scores: QuestionScores) -> None:
        raw_scores = meta.get("scores") or []
        stored_effective, stored_relative = meta["effective_scores"], meta["option_relative_scores"]
        for i, value in enumerate(scores.effective):
            raw = meta["yields"][i]
            raw_in_scores = (raw_scores[i] or {}).get("yield")
            if not _same_number(raw, raw_in_scores):
                listed, in_scores = yield_value(raw), yield_value(raw_in_scores)
                if (listed is not None and in_scores is not None
                        and not self.close(listed, in_scores, 100)):
                    self.error(qid, f"option {i}: meta.yields={raw!r} but "
                                    f"meta.scores.yield={raw_in_scores!r}")
            if i in scores.fallback_options or (
                _same_number(stored_effective[i], value)
                and _same_number(stored_relative[i], scores.relative[i])
            ):
                continue
            stored = number(meta["effective_scores"][i])
            if stored is None:
                self.error(qid, f"option {i}: meta.effective_scores="
                                f"{meta['effective_scores'][i]!r} is not a number")
            elif not self.close(stored, value, 100):
                notes = outcome_of(raw_scores[i]).notes
                how = f" ({'; '.join(notes)})" if notes else ""
                self.error(qid, f"option {i}: meta.effective_scores={stored:g} but the formula "
                                f"gives {value:.6g} from {_outcome_text(raw_scores[i])}{how}")
            stored_rel = number(meta["option_relative_scores"][i])
            if stored_rel is None:
                self.error(qid, f"option {i}: meta.option_relative_scores="
                                f"{meta['option_relative_scores'][i]!r} is not a number")
            elif not self.close(stored_rel, scores.relative[i]):
                self.error(qid, f"option {i}: meta.option_relative_scores={stored_rel:g} but "
                                f"effective / best effective = {scores.relative[i]:.6g}")

    def _best(
        self, qid: str, sample: Sample, meta: Mapping[str, Any], scores: QuestionScores
    ) -> None:
        answer = sample.gold if sample.gold == scores.best else sorted(set(sample.gold))
        if answer != sorted(scores.best):
            self.error(qid, f"answer={answer} but the best option(s) by the formula are "
                            f"{sorted(scores.best)} (effective {_fmt(scores.effective)})")
        if scores.best_effective <= 0:
            self._all_zero(qid)
        best_eff = number(meta.get("best_effective_score"))
        if best_eff is not None and not self.close(best_eff, scores.best_effective, 100):
            self.error(qid, f"meta.best_effective_score={best_eff:g} but the best option "
                            f"effective is {scores.best_effective:.6g}")
        best_yield = number(meta.get("best_yield"))
        best_option_yields = [scores.yields[i] for i in scores.best]
        if best_yield is not None and not (
            self.close(best_yield, scores.best_yield, 100)
            or any(self.close(best_yield, y, 100) for y in best_option_yields)
        ):
            self.error(qid, f"meta.best_yield={best_yield:g} is neither the highest option "
                            f"yield ({scores.best_yield:g}) nor the yield of a best option")
        for key, best in (("global_best_effective_score", scores.best_effective),
                          ("global_best_yield", scores.best_yield)):
            value = number(meta.get(key))
            if value is not None and value < best and not self.close(value, best, 100):
                self.error(qid, f"meta.{key}={value:g} is below the option set's best "
                                f"({best:.6g})")

    def _shape(self, qid: str, sample: Sample) -> None:
        data = sample.input
        qtype = data["question_type"]
        inp = data["input"]
        options = data["options"]
        if len({condition_signature(option) for option in options}) != len(options):
            self.warn(qid, "two options have identical conditions")
        constant = inp.get("constant_conditions")
        overlap = set(constant).intersection(*options) if constant and options else ()
        if overlap:
            self.warn(qid, f"keys {sorted(overlap)} are both constant and in every option")
        if base_family(qtype) == "all_varying":
            if data.get("target_key") is not None:
                self.warn(qid, f"target_key={data['target_key']!r} in an all_varying question")
            if qtype == "all_varying_reference" and len(options) < MIN_REMAINING_ALL_VARYING:
                self.error(qid, f"{len(options)} options left after removing references "
                                f"(at least {MIN_REMAINING_ALL_VARYING} required)")
        else:
            if inp.get("fixed_conditions") is None:
                self.warn(qid, "single_varying question without input.fixed_conditions")
            target = data.get("target_key")
            if any(len(option) != 1 or target not in option for option in options):
                self.warn(qid, f"an option sets keys other than target_key {target!r}")

    def _references(self, qid: str, sample: Sample, scores: QuestionScores) -> None:
        inp = sample.input["input"]
        refs = inp.get("reference_conditions") or []
        if not MIN_REFERENCES <= len(refs) <= MAX_REFERENCES:
            self.error(qid, f"{len(refs)} reference condition groups (rule: "
                            f"{MIN_REFERENCES}..{MAX_REFERENCES})")
        fixed = inp.get("fixed_conditions") or {}
        constant = inp.get("constant_conditions") or {}
        option_sigs = {
            condition_signature(merged(constant, fixed, option)): i
            for i, option in enumerate(sample.input["options"])
        }
        global_best = number(sample.meta["release"].get("global_best_effective_score"))
        for k, ref in enumerate(refs, start=1):
            hit = option_sigs.get(condition_signature(ref.get("conditions") or {}))
            if hit is not None:
                self.error(qid, f"reference {k} equals option {hit} + fixed/constant conditions")
            value = _reference_effective(ref)
            if value is None:
                self.warn(qid, f"reference {k} has no readable outcome")
                continue
            if value > scores.best_effective and not is_tie(value, scores.best_effective):
                self.error(qid, f"reference {k} (effective {value:.6g}) is better than the best "
                                f"option ({scores.best_effective:.6g})")
            if global_best is not None and global_best > 0 and (
                value >= global_best or self.close(value, global_best, 100)
            ):
                self.error(qid, f"reference {k} (effective {value:.6g}) exposes the table's top "
                                f"score {global_best:g}")


def _same_number(a: Any, b: Any) -> bool:
    """Two equal finite floats (which every check here accepts as agreeing, at any tolerance)."""
    return type(a) is float and a == b and a - a == 0.0


def _reference_effective(ref: Mapping[str, Any]) -> float | None:
    outcome = outcome_of(ref.get("outcome") or {})
    if outcome.readable:
        return outcome.effective
    return number(ref.get("effective_score"))


def _outcome_text(scores: Mapping[str, Any] | None) -> str:
    scores = scores or {}
    parts = [f"{k}={scores[k]!r}" for k in ("yield", "ee", "er", "dr", "rr")
             if scores.get(k) is not None]
    return ", ".join(parts) or "no scores"


def _fmt(values: Sequence[float]) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in values) + "]"


