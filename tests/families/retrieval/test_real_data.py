"""Acceptance on real annotated sources: convert ../shared/data/retrieval into a temp data root
(nothing copied into the project), validate it, score freshly generated run files (seeded from
the clock, printed on failure) and check every metric against an independent computation of
the issue's definitions to 1e-9."""

from __future__ import annotations

import json
import math
import random
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchreg import RunOptions, load_task, run_task
from benchreg.core.pipeline import load_context, load_dataset, run_validators
from benchreg.families.retrieval.convert import convert
from tests.conftest import shared_path

pytestmark = pytest.mark.shared_data
MODALITIES = ("pdf", "conversation", "video", "image", "code", "ui_screenshot")
STRONG = 0.5


@pytest.fixture(scope="module")
def real_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shared = shared_path("data", "retrieval")
    out = tmp_path_factory.mktemp("retrieval_real")
    counts = convert(shared, out)
    assert counts["pdf"] == 326 and counts["video"] == 3092 and counts["code"] == 300
    assert counts["ui_screenshot"] == 509 + 616  # SOURCE.md: 509 dev + 616 test examples
    return out


def spec_for(modality: str):  # type: ignore[no-untyped-def]
    spec = load_task(f"retrieval/{modality}")
    metrics = [m.ref.model_copy(update={"params": {**m.params, "strong_score": STRONG}})
               if m.name == "false_recall" else m.ref for m in spec.metrics]
    return spec.evolve(metrics=metrics)


# --- an independent reading of the definitions ---------------------------------------------


def t(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def overlaps(modality: str, r: dict[str, Any], g: dict[str, Any]) -> bool:
    def rng(unit: str) -> range:
        lo = r.get(unit, r.get(f"{unit}_start"))
        hi = r.get(unit, r.get(f"{unit}_end"))
        return range(lo, hi + 1) if lo is not None else range(0)

    if modality == "image":
        return True
    if modality == "pdf":
        return g["page"] in rng("page") and (r.get("block") is None or g.get("block") is None
                                             or r["block"] == g["block"])
    if modality == "video":
        return max(r["t_start"], g["t_start"]) < min(r["t_end"], g["t_end"])
    if modality == "conversation":
        return g["turn"] in rng("turn")
    if modality == "ui_screenshot":
        (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = r["bbox"], g["bbox"]
        return max(ax0, bx0) < min(ax1, bx1) and max(ay0, by0) < min(ay1, by1)
    if r["path"] != g["path"]:
        return False
    if "symbol" in g:
        return "symbol" in r and (g["symbol"] == r["symbol"]
                                  or g["symbol"].startswith(r["symbol"] + "."))
    return g["line"] in rng("line")


def independent(entries: list[dict], run: dict[str, dict], manifest: dict[str, dict],
                modality: str) -> dict[str, float]:
    sums: dict[str, list[float]] = {k: [] for k in (
        "recall@10", "mrr", "ndcg@10", "false_recall", "temporal_correctness",
        "holder_correctness")}
    for e in entries:
        results = run.get(e["query_id"], {}).get("results")
        as_of, holder = t(e["as_of"]), e["scope"]["holder"]
        future, foreign = [], []
        for r in results or []:
            row = manifest.get(r["source_id"], {})
            obs = t(r.get("observed_at") or row.get("observed_at"))
            who = r.get("holder") or row.get("holder")
            future.append(as_of is not None and obs is not None and obs > as_of)
            foreign.append(holder is not None and who is not None and who != holder)
        valid = [not (a or b) for a, b in zip(future, foreign, strict=True)]

        def hit_set(i: int) -> set[int]:
            r = results[i]  # noqa: B023
            return {j for j, g in enumerate(e["gold"]) if valid[i] and  # noqa: B023
                    g["source_id"] == r["source_id"] and overlaps(modality, r["region"],
                                                                  g["region"])}

        if e["gold"]:
            if results is None:
                for k in ("recall@10", "mrr", "ndcg@10"):
                    sums[k].append(0.0)
            else:
                hs = [hit_set(i) for i in range(len(results))]
                top = set().union(*hs[:10]) if hs else set()
                sums["recall@10"].append(len(top) / len(e["gold"]))
                first = next((i + 1 for i, h in enumerate(hs) if h), None)
                sums["mrr"].append(1 / first if first else 0.0)
                seen: set[int] = set()
                dcg = 0.0
                for i, h in enumerate(hs[:10]):
                    if h - seen:
                        dcg += 1 / math.log2(i + 2)
                    seen |= h
                ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(e["gold"]))))
                sums["ndcg@10"].append(dcg / ideal)
        else:
            strong = results is None or any(
                r.get("score") is None or r["score"] >= STRONG for r in results)
            sums["false_recall"].append(float(strong))
        if as_of is not None:
            sums["temporal_correctness"].append(float(results is not None and
                                                      not any(future[:10])))
        if holder is not None:
            sums["holder_correctness"].append(float(results is not None and
                                                    not any(foreign[:10])))
    out = {k: (sum(v) / len(v) if v else 0.0) for k, v in sums.items()}
    lat = [x["latency_s"] for x in run.values() if x.get("latency_s") is not None]
    out["latency_p50"] = float(np.quantile(lat, 0.5)) if lat else 0.0
    out["latency_p95"] = float(np.quantile(lat, 0.95)) if lat else 0.0
    return out


# --- generated runs -------------------------------------------------------------------------


def variant(modality: str, region: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A result region that overlaps the gold region, or nearly does."""
    g = dict(region)
    if modality == "pdf":
        return rng.choice([g, {"page": g["page"], "block": rng.randint(0, 2)},
                           {"page_start": max(1, g["page"] - 1), "page_end": g["page"]},
                           {"page": g["page"] + 1}])
    if modality == "conversation":
        return rng.choice([g, {"turn_start": max(0, g["turn"] - 2), "turn_end": g["turn"]},
                           {"turn": g["turn"] + 1}])
    if modality == "video":
        shift = rng.choice([-4.0, 0.0, 2.0, 30.0])
        start = max(0.0, g["t_start"] + shift)
        return {"t_start": start, "t_end": max(start + 0.5, g["t_end"] + shift)}
    if modality == "ui_screenshot":
        x0, y0, x1, y1 = g["bbox"]
        w, h = x1 - x0, y1 - y0
        dx, dy = rng.choice([(0, 0), (w / 2, 0), (0, -h / 2), (w / 3, h / 3), (w, 0), (0, h),
                             (2 * w, 0)])  # same, overlapping, touching an edge, apart
        return {"bbox": [x0 + dx, y0 + dy, x1 + dx, y1 + dy]}
    if modality == "code":
        if "symbol" in g:
            parent = g["symbol"].split(".")[0]
            return rng.choice([g, {"path": g["path"], "symbol": parent},
                               {"path": g["path"], "symbol": parent + "x"}])
        start = max(1, g["line"] - 3)
        end = max(start, g["line"] + rng.choice([-1, 3]))
        return rng.choice([g, {"path": g["path"], "line_start": start, "line_end": end}])
    return {}


def make_run(entries: list[dict], sources: list[str], modality: str,
             rng: random.Random) -> dict[str, dict]:
    run = {}
    for e in entries:
        if rng.random() < 0.05:
            continue  # missing
        results = []
        for _ in range(rng.randint(0, 25)):
            if e["gold"] and rng.random() < 0.4:
                g = rng.choice(e["gold"])
                item = {"source_id": g["source_id"], "region": variant(modality, g["region"], rng)}
            else:
                other = rng.choice(e["gold"])["region"] if e["gold"] else None
                item = {"source_id": rng.choice(sources),
                        "region": variant(modality, other, rng) if other else
                        {"pdf": {"page": 1}, "conversation": {"turn": 1}, "image": {},
                         "video": {"t_start": 0.0, "t_end": 4.0},
                         "code": {"path": "setup.py", "line": 1},
                         "ui_screenshot": {"bbox": [0.0, 0.0, 0.5, 0.1]}}[modality]}
            if rng.random() < 0.15:
                item["observed_at"] = rng.choice(["2000-01-01T00:00:00+00:00",
                                                  "2099-01-01T00:00:00+00:00"])
            if rng.random() < 0.15:
                item["holder"] = rng.choice(["someone-else", e["scope"]["holder"] or "x"])
            results.append(item)
        scores = sorted((rng.random() for _ in results), reverse=True)
        for item, score in zip(results, scores, strict=True):
            item["score"] = None if rng.random() < 0.02 else score
        latency = None if rng.random() < 0.1 else rng.random()
        run[e["query_id"]] = {"query_id": e["query_id"], "results": results,
                              "latency_s": latency}
    return run


@pytest.mark.parametrize("modality", MODALITIES)
def test_real_sets_validate(real_root: Path, modality: str) -> None:
    spec = spec_for(modality)
    for view in ("dev", "test") if modality != "code" else ("test",):
        dataset = load_dataset(spec, view, real_root, final=True)
        ctx = load_context(spec, view, real_root)
        errors = [f for f in run_validators(spec, dataset, ctx) if f.severity == "error"]
        assert not errors and not dataset.info["void"], errors[:3]


@pytest.mark.parametrize("modality", MODALITIES)
def test_every_metric_matches_an_independent_computation(
    real_root: Path, tmp_path: Path, modality: str
) -> None:
    seed = time.time_ns() % 2**32
    rng = random.Random(seed)
    manifest = {r["source_id"]: r for r in map(json.loads, (
        real_root / "corpus" / "manifest.jsonl").read_text("utf-8").splitlines())}
    sources = [s for s, r in manifest.items() if r["modality"] == modality]
    entries = [json.loads(line) for line in
               (real_root / "sets" / f"{modality}.jsonl").read_text("utf-8").splitlines()]
    view = rng.choice(["dev", "test"]) if modality != "code" else "test"
    entries = [e for e in entries if e["split"] == view]
    run = make_run(entries, sources, modality, rng)
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in run.values()), "utf-8")
    result = run_task(spec_for(modality), view=view, roots={"retrieval": str(real_root)},
                      system_cfg={"name": "predictions", "path": str(path)},
                      options=RunOptions(progress=False, n_boot=0, final=True))
    assert result.statuses["invalid"] == 0
    expected = independent(entries, run, manifest, modality)
    for name, value in expected.items():
        assert result.metrics[name].value == pytest.approx(value, abs=1e-9), (
            f"{modality} {view} {name} (seed {seed})")


def test_ui_screenshot_conversion(real_root: Path) -> None:
    """UIBert RefExp: one entry per TFRecord example, one source per Rico screen, gold = the
    referred element's normalized box, the corpus = the screen's view-hierarchy leaves."""
    entries = [json.loads(line) for line in
               (real_root / "sets" / "ui_screenshot.jsonl").read_text("utf-8").splitlines()]
    assert sum(e["split"] == "dev" for e in entries) == 509
    assert sum(e["split"] == "test" for e in entries) == 616
    manifest = [r for r in map(json.loads, (real_root / "corpus" / "manifest.jsonl")
                               .read_text("utf-8").splitlines())
                if r["modality"] == "ui_screenshot"]
    assert len(manifest) == 1125  # every example is a different screen
    by_source = {r["source_id"]: r for r in manifest}
    for e in entries:
        assert not e["unanswerable"] and e["answer"] is None and len(e["gold"]) == 1
        gold = e["gold"][0]
        x0, y0, x1, y1 = gold["region"]["bbox"]
        assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
        assert gold["source_id"].startswith("rico-") and gold["source_id"] in by_source
    first = entries[0]
    assert first["query_id"] == "uibert-refexp-dev-0" and first["origin"]["item"] == "dev:0"
    rows = [json.loads(line) for line in (real_root / "corpus" / by_source[
        first["gold"][0]["source_id"]]["path"]).read_text("utf-8").splitlines()]
    assert rows and all(len(r["bbox"]) == 4 and isinstance(r["text"], str) for r in rows)
