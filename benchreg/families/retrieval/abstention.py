"""The BM25 baseline's abstention threshold, chosen on the dev split and recorded here.

False recall (spec 004: the share of unanswerable entries answered with strong evidence) means
something only if a system can abstain. The baseline abstains by dropping every result whose
*relevance* (its BM25 score over the best score the query could reach in the index, bm25.py)
is not above `min_relevance`; an entry left without results is an abstention. The false
recall metric's `strong_score` stays unset in the task entries: BM25 scores have no common
scale across systems, so any result returned for an unanswerable entry counts as a false
recall, and a system shows that it abstains by returning none (set `strong_score` only for a
system whose scores are calibrated, e.g. probabilities).

How the value is chosen (`python -m benchreg.families.retrieval.abstention --root <root>
--task retrieval/conversation`): one baseline run on the dev split without a threshold; for
every candidate t (0 and each distinct relevance of a dev entry's top result), recall@10 and
false recall as they would be with ``min_relevance = t`` (a threshold keeps a prefix of each
ranking, so one run gives them all exactly); the chosen t maximises the harmonic mean of recall
and abstention,

    H(t) = 2 R (1 - F) / (R + 1 - F),   R = recall@10(t), F = false_recall(t)

(0 when either is 0: never abstaining, F = 1, and always abstaining, R = 0, both score 0), the
smallest t on ties. On LoCoMo and MMLongBench-Doc the BM25 relevance separates unanswerable
questions from answerable ones poorly (Youden's R - F stays <= 0.1 at every t), so the chosen
threshold trades much of the recall for some abstention: the dev figures are in :data:`CHOSEN`.
A data set without unanswerable dev entries has nothing to choose: 0.0. :data:`CHOSEN` holds
the recorded choice per data set (`origin.dataset`, with the dev figures and the sha256 of the
set it was chosen on); the baseline uses it whenever its `min_relevance` param is not given
and the run's entries are of that data set (a threshold chosen on one data set is not carried
over to another: the embedded sample and any other set get 0.0).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# origin.dataset -> the recorded choice for the default chunker (docs/retrieval.md, "Abstention"):
# chosen with `python -m benchreg.families.retrieval.abstention --root <root> --task ...` on
# the root the docs' import commands build (corpus/manifest.jsonl sha256 5074e7bb...0c78).
# `min_relevance` is recorded as printed (recorded(): a value inside the gap above the chosen
# threshold, a dev entry's top relevance): a rounding of the threshold itself keeps or drops
# the results at it (0.1960 for LoCoMo's 0.19601... gave false recall 0.5493, not 0.5352)
CHOSEN: dict[str, dict[str, Any]] = {
    "LoCoMo": {  # retrieval/conversation, dev (26, 30): 231 answerable, 71 unanswerable
        "min_relevance": 0.1961, "chunker": "default", "set": "locomo.jsonl",
        "set_sha256": "51a4744e8fc0f6473986c5bc22f9420c2505d0a8de9b2e8f51f11a300ea2c32e",
        "dev": {"recall@10": 0.2049, "false_recall": 0.5352,
                "without": {"recall@10": 0.5842, "false_recall": 1.0}},
    },
    "MMLongBench-Doc": {  # retrieval/pdf, dev (7 documents): 50 answerable, 8 unanswerable
        "min_relevance": 0.297, "chunker": "default", "set": "mmlongbench_doc.jsonl",
        "set_sha256": "9e32702f362187992f0f60ceb9f860f1e3ea639a4ac23cbb5c5f9ab0643bb742",
        "dev": {"recall@10": 0.3215, "false_recall": 0.5,
                "without": {"recall@10": 0.6964, "false_recall": 1.0}},
    },
}


def chosen_min_relevance(dataset: str | None, chunker: str = "default") -> float:
    choice = CHOSEN.get(dataset) if dataset is not None else None
    if choice is None or chunker not in ("default", choice.get("chunker", "default")):
        return 0.0
    return float(choice["min_relevance"])


@dataclass(frozen=True, slots=True)
class Curve:
    threshold: float
    recall_at_10: float
    false_recall: float

    @property
    def h(self) -> float:
        """Harmonic mean of recall@10 and 1 - false recall (0 when either is 0)."""
        r, a = self.recall_at_10, 1.0 - self.false_recall
        return 2 * r * a / (r + a) if r > 0 and a > 0 else 0.0


def curve(rows: Sequence[tuple[list[int], list[float]]], k: int = 10) -> list[Curve]:
    """Per candidate threshold: recall@k over the answerable rows and false recall over the
    unanswerable ones. A row is (first-hit rank per gold region, 0 = none; the relevance of
    each result in rank order, descending)."""
    tops = sorted({rel[0] for _, rel in rows if rel})
    out = []
    for t in [0.0, *tops]:
        recall, n_answerable, false, n_unanswerable = 0.0, 0, 0, 0
        for first_hit, rel in rows:
            kept = sum(1 for r in rel if r > t)
            if first_hit:
                n_answerable += 1
                limit = min(k, kept)
                recall += sum(1 for rank in first_hit if 0 < rank <= limit) / len(first_hit)
            else:
                n_unanswerable += 1
                false += kept > 0
        out.append(Curve(t, recall / n_answerable if n_answerable else 0.0,
                         false / n_unanswerable if n_unanswerable else 0.0))
    return out


def best(points: Sequence[Curve]) -> Curve:
    return max(points, key=lambda c: (round(c.h, 12), -c.threshold))


def recorded(rows: Sequence[tuple[list[int], list[float]]], threshold: float) -> float:
    """The value to record for a chosen ``threshold`` (a dev entry's top relevance): one that
    keeps and drops exactly the results the threshold does, with room on both sides, so a run
    gives the chosen figures: the shortest decimal strictly between the threshold and the next
    relevance above it (every value in that gap gives the same curve point). A rounding of the
    threshold itself may keep the entry at the threshold, or drop the next one, and a run's
    relevance may differ from this one in the last bits."""
    above = [r for _, rel in rows for r in rel if r > threshold]
    upper = min(above) if above else threshold + 1.0
    middle = (threshold + upper) / 2
    for digits in range(2, 17):
        value = round(middle, digits)
        if threshold < value < upper and value - threshold > 1e-9 and upper - value > 1e-9:
            return value
    return middle


def dev_rows(task_name: str, root: Path, chunker: str = "default"
             ) -> tuple[list[tuple[list[int], list[float]]], dict[str, Any]]:
    """One baseline run on dev without a threshold: the rows for :func:`curve` and the sha256
    of the files it read."""
    from benchreg import RunOptions, load_task, run_task

    task = load_task(task_name)
    result = run_task(task, view="dev", roots={"retrieval": str(root)},
                      system_cfg={"name": "baseline",
                                  "params": {"min_relevance": 0.0, "chunker": chunker}},
                      options=RunOptions(progress=False, n_boot=0))
    rows = []
    for sample, prediction in zip(result.samples, result.predictions, strict=True):
        resolution = prediction.metadata.get("resolution") or {}
        bound = prediction.metadata.get("score_bound") or 0.0
        scores = [r["score"] for r in (prediction.answer or {}).get("results", [])]
        relevance = [s / bound if bound else 0.0 for s in scores]
        first_hit = list(resolution.get("first_hit", [])) if sample.gold else []
        rows.append((first_hit, relevance))
    info = result.dataset.info.get("sha256", {})
    return rows, info


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchreg.families.retrieval.abstention",
        description="Choose the BM25 baseline's min_relevance on the dev split (maximising the "
        "harmonic mean of recall@10 and 1 - false recall) and print what to record in "
        "abstention.CHOSEN.")
    parser.add_argument("--root", required=True, type=Path, help="the retrieval data root")
    parser.add_argument("--task", required=True, help="e.g. retrieval/conversation")
    parser.add_argument("--chunker", default="default")
    args = parser.parse_args(argv)
    rows, hashes = dev_rows(args.task, args.root, args.chunker)
    points = curve(rows)
    choice = best(points)
    n_answerable = sum(1 for first, _ in rows if first)
    print(f"{args.task} dev: {n_answerable} answerable, {len(rows) - n_answerable} "
          "unanswerable entries")
    for c in [*points[:: max(1, len(points) // 20)], choice]:
        print(f"  t={c.threshold:.4f}  recall@10={c.recall_at_10:.4f}  "
              f"false_recall={c.false_recall:.4f}  H={c.h:.4f}")
    # the value to record (recorded()): a rounding of the threshold moves the entries at it
    print(f"chosen: min_relevance={recorded(rows, choice.threshold)!r} (threshold "
          f"{choice.threshold!r}; recall@10 {choice.recall_at_10:.4f}, false recall "
          f"{choice.false_recall:.4f}); files: {hashes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
