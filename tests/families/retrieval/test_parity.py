"""Parity of recall@10, MRR, MRR@10 and nDCG@10 with trec_eval (ir-measures, pytrec_eval; MS
MARCO's rule for MRR@10) and ranx, on generated runs where every gold region maps to exactly
one atom (a conversation turn)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchreg.core.ranking.mrr import MRR
from benchreg.core.ranking.ndcg_at_k import NDCGAtK
from benchreg.core.ranking.recall_at_k import RecallAtK
from benchreg.core.types import Prediction, Sample
from benchreg.families.retrieval.resolver import resolve_results

ir_measures = pytest.importorskip("ir_measures")
ranx = pytest.importorskip("ranx")


def generated(n_queries: int, seed: int) -> tuple[list[Sample], list[Prediction], dict, dict]:
    rng = random.Random(seed)
    samples, preds, qrels, run = [], [], {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        sources = [f"s{q}_{i}" for i in range(3)]
        atoms = [(s, t) for s in sources for t in range(1, 15)]
        gold_atoms = rng.sample(atoms, rng.randint(1, 6))
        n_results = rng.randint(0, 40)
        ranked = rng.sample(atoms, min(n_results, len(atoms)))
        scores = sorted((rng.random() for _ in ranked), reverse=True)
        gold = [{"source_id": s, "region": {"turn": t}} for s, t in gold_atoms]
        samples.append(Sample(qid, {}, gold, {"modality": "conversation"}))
        results = [{"source_id": s, "region": {"turn": t}, "score": sc}
                   for (s, t), sc in zip(ranked, scores, strict=True)]
        pred = Prediction(qid, answer={"results": results})
        pred.resolved = resolve_results(samples[-1], results, {})
        preds.append(pred)
        qrels[qid] = {f"{s}#{t}": 1 for s, t in gold_atoms}
        run[qid] = {f"{s}#{t}": sc for (s, t), sc in zip(ranked, scores, strict=True)}
    return samples, preds, qrels, run


def per_query(metric, samples, preds) -> np.ndarray:  # type: ignore[no-untyped-def]
    return metric.stats(samples, preds)[:, 0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parity_with_trec_eval_and_ranx(seed: int) -> None:
    samples, preds, qrels, run = generated(300, seed)
    ours = {
        "R@10": per_query(RecallAtK(k=10), samples, preds),
        "RR": per_query(MRR(), samples, preds),
        "nDCG@10": per_query(NDCGAtK(k=10), samples, preds),
    }
    measures = [ir_measures.parse_measure(m) for m in ours]
    qids = [s.id for s in samples]
    evaluator = ir_measures.providers.registry["pytrec_eval"].evaluator(measures, qrels)
    got = {(m.query_id, str(m.measure)): m.value for m in evaluator.iter_calc(run)}
    for name, values in ours.items():
        theirs = np.array([got.get((q, name), 0.0) for q in qids])  # an empty run scores 0
        np.testing.assert_allclose(values, theirs, rtol=0, atol=1e-9, err_msg=name)
    # mrr@10 = RR@10: pytrec_eval's recip_rank has no cutoff, so the reference is ir-measures'
    # MS MARCO provider (the official MRR@10 script's rule) and ranx's mrr@10
    cut = per_query(MRR(k=10), samples, preds)
    rr10 = ir_measures.parse_measure("RR@10")
    msmarco = ir_measures.providers.registry["msmarco"].evaluator([rr10], qrels)
    at10 = {m.query_id: m.value for m in msmarco.iter_calc(run)}
    theirs = np.array([at10.get(q, 0.0) for q in qids])
    np.testing.assert_allclose(cut, theirs, rtol=0, atol=1e-9, err_msg="RR@10")
    assert (cut <= ours["RR"] + 1e-12).all() and (cut < ours["RR"]).any()  # the cut matters
    rq, rr = ranx.Qrels(qrels), ranx.Run({q: r for q, r in run.items() if r} or {"x": {"y": 1}})
    names = ["recall@10", "mrr", "mrr@10", "ndcg@10"]
    ranx_means = ranx.evaluate(rq, rr, names, make_comparable=True)
    ours["RR@10"] = cut
    for ours_name, ranx_name in (("R@10", "recall@10"), ("RR", "mrr"), ("RR@10", "mrr@10"),
                                 ("nDCG@10", "ndcg@10")):
        assert float(np.mean(ours[ours_name])) == pytest.approx(ranx_means[ranx_name], abs=1e-9)


def test_parity_of_the_means_with_missing_queries_scoring_zero() -> None:
    samples, preds, qrels, run = generated(200, 7)
    metric = RecallAtK(k=10)
    stats = metric.stats(samples, preds)
    value = metric.reduce(stats.sum(axis=0), len(stats))[0]
    evaluator = ir_measures.evaluator([ir_measures.parse_measure("R@10")], qrels)
    per = {m.query_id: m.value for m in evaluator.iter_calc(run)}
    assert value == pytest.approx(sum(per.get(s.id, 0.0) for s in samples) / len(samples),
                                  abs=1e-9)
