"""`benchreg compare`: pairing, tests, Holm, refusal on different data; end to end on real
sweeps (two seeded random systems: no difference; baseline vs random: baseline better)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from benchreg.app.commands import main as command_main
from benchreg.app.compare import compare, holm, write_comparison
from benchreg.core.errors import BenchregError
from tests.app.test_report import write_job


def test_holm_matches_the_step_down_rule() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_binary_scores_get_mcnemar_others_wilcoxon(tmp_path: Path) -> None:
    rng = random.Random(0)
    write_job(tmp_path, "0", "t/bin", "v", "A", [1] * 30 + [0] * 10)
    write_job(tmp_path, "1", "t/bin", "v", "B", [0] * 30 + [1] * 10)
    write_job(tmp_path, "2", "t/real", "v", "A", [rng.random() for _ in range(40)])
    write_job(tmp_path, "3", "t/real", "v", "B", [rng.random() for _ in range(40)])
    result = compare(tmp_path, a="A", b="B")
    by_task = {r.task: r for r in result.rows}
    binary, real = by_task["t/bin"], by_task["t/real"]
    assert binary.test == "McNemar (exact)" and binary.discordant == (30, 10)
    assert binary.difference == pytest.approx(0.5) and binary.significant
    assert binary.ci95[0] > 0
    assert real.test == "Wilcoxon signed-rank" and not real.significant
    assert binary.p_holm == pytest.approx(min(1.0, 2 * binary.p))


def test_refuses_when_the_data_sha256_differ(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_job(a, "0", "t/x", "v", "A", [1, 0, 1], data_sha="one")
    write_job(b, "0", "t/x", "v", "B", [1, 0, 0], data_sha="two")
    with pytest.raises(BenchregError, match="different data"):
        compare(a, b)
    assert command_main(["compare", str(a), str(b)]) == 2


def test_one_sweep_needs_two_models_named_when_it_holds_more(tmp_path: Path) -> None:
    for i, model in enumerate(("A", "B", "C")):
        write_job(tmp_path, str(i), "t/x", "v", model, [1, 0, 1])
    with pytest.raises(BenchregError, match="holds 3"):
        compare(tmp_path)
    result = compare(tmp_path, a="C", b="A")
    assert result.rows[0].difference == 0


def test_non_mean_metric_is_listed_not_tested(tmp_path: Path) -> None:
    for name, model in (("0", "A"), ("1", "B")):
        folder = write_job(tmp_path, name, "t/f1", "v", model, [1, 0])
        rows = ('{"id": "s0", "score": null}', '{"id": "s1", "score": null}')
        (folder / "samples.jsonl").write_text("".join(f"{row}\n" for row in rows))
    (row,) = compare(tmp_path).rows
    assert row.p is None and "no per-sample scores" in row.note
    written = write_comparison(compare(tmp_path), tmp_path / "out")
    assert (tmp_path / "out" / "compare.html") in written


def _sweep(cli, folder: Path, *args: str) -> None:
    proc = cli("-m", "task=glob(molp2s/*)", "view=correct", *args, f"hydra.sweep.dir={folder}")
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow
def test_real_sweeps_random_vs_random_and_baseline_vs_random(cli, tmp_path: Path) -> None:
    both, other = tmp_path / "both", tmp_path / "seed1"
    _sweep(cli, both, "model=baseline,random")
    _sweep(cli, other, "model=random", "model.seed=1")
    proc = cli(
        "compare", str(both), str(other), "--a", "random(seed=0)", "--out", str(tmp_path / "rr")
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "rr" / "compare.json").read_text())
    assert len(data["rows"]) == 15
    assert not any(r["significant"] for r in data["rows"])
    assert "0 of 15 tasks differ significantly" in proc.stdout
    proc = cli("compare", str(both), "--a", "baseline:molp2s_rdkit", "--b", "random(seed=0)")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((both / "compare" / "compare.json").read_text())
    rows = data["rows"]
    assert sum(r["difference"] for r in rows) > 0  # the baseline beats chance overall
    assert any(r["significant"] and r["difference"] > 0 for r in rows)
    assert not any(r["significant"] and r["difference"] < 0 for r in rows)
    assert (both / "compare" / "compare.svg").is_file()
    assert (both / "compare" / "compare.html").is_file()


# --- identities, incomplete runs, CIs (issue 19, items 6 and 1) -----------------------------------

SHA_A = "0123456789ab" + "c" * 52
SHA_B = "fedcba987654" + "d" * 52
SHARED = "predictions:results.json"


def test_two_files_of_one_name_are_two_models(tmp_path: Path) -> None:
    write_job(
        tmp_path, "0", "t/x", "v", SHARED, [1, 1, 1, 0], model_id=f"predictions:sha256={SHA_A}"
    )
    write_job(
        tmp_path, "1", "t/x", "v", SHARED, [0, 0, 1, 0], model_id=f"predictions:sha256={SHA_B}"
    )
    result = compare(tmp_path)  # two identities: two models, never merged into one side
    assert result.rows[0].difference == pytest.approx(0.5)
    assert f"predictions:sha256={SHA_A} ({SHARED})" in result.a
    with pytest.raises(BenchregError, match=r"'predictions:results.json' names 2 different models"):
        compare(tmp_path, a=SHARED, b=f"predictions:sha256={SHA_B}")
    named = compare(tmp_path, a=f"predictions:sha256={SHA_B}", b=f"predictions:sha256={SHA_A}")
    assert named.rows[0].difference == pytest.approx(-0.5)
    with pytest.raises(BenchregError, match="name the same model"):
        compare(tmp_path, a=f"predictions:sha256={SHA_A}", b=f"predictions:sha256={SHA_A}")


def test_two_jobs_of_one_side_for_one_task_are_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_job(a, "0", "t/x", "v", "A", [1, 0, 1])
    write_job(a, "1", "t/x", "v", "A", [1, 1, 1])
    write_job(b, "0", "t/x", "v", "B", [1, 0, 0])
    with pytest.raises(BenchregError, match="side A has two jobs of model A for task t/x view v"):
        compare(a, b)


def test_an_incomplete_run_is_not_compared(tmp_path: Path) -> None:
    write_job(tmp_path, "0", "t/x", "v", "A", [1, 0, 1])
    write_job(tmp_path, "1", "t/x", "v", "B", [1, 0, 0])
    write_job(tmp_path, "2", "t/y", "v", "A", [1, 1, 1])
    write_job(tmp_path, "3", "t/y", "v", "B", [0, 0, 0], extra={"complete": False})
    write_job(tmp_path, "4", "t/z", "v", "C", [0, 0, 0], extra={"complete": False})
    result = compare(tmp_path, a="A", b="B")
    assert [r.task for r in result.rows] == ["t/x"]
    assert (
        "incomplete in B (failed requests not asked again; not compared): t/y [v]" in result.notes
    )
    with pytest.raises(BenchregError, match=r"no finished job of model 'C' \(1 incomplete job"):
        compare(tmp_path, a="A", b="C")


def test_each_mean_has_its_ci_and_n(tmp_path: Path) -> None:
    write_job(tmp_path, "0", "t/bin", "v", "A", [1] * 30 + [0] * 10)
    write_job(tmp_path, "1", "t/bin", "v", "B", [0] * 30 + [1] * 10)
    (row,) = compare(tmp_path).rows
    from benchreg.core.stats import wilson_ci

    assert row.ci95_a == pytest.approx(wilson_ci(30, 40)) and row.n_pairs == 40
    assert row.ci95_b == pytest.approx(wilson_ci(10, 40))
    written = write_comparison(compare(tmp_path), tmp_path / "out")
    md = (tmp_path / "out" / "compare.md").read_text()
    lo, hi = wilson_ci(30, 40)
    assert f"| 40 | 0.7500 [{lo:.4f}, {hi:.4f}] |" in md
    assert (tmp_path / "out" / "compare.json") in written


@pytest.mark.slow
def test_retrieval_runs_are_compared_per_answerable_query(cli, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("-m", "task=retrieval/conversation", f"hydra.sweep.dir={a}").returncode == 0
    wide = cli("-m", "task=retrieval/conversation", "chunker=window", f"hydra.sweep.dir={b}")
    assert wide.returncode == 0, wide.stderr[-1500:]
    assert command_main(["compare", str(a), str(b)]) == 0
    result = json.loads((a / "compare" / "compare.json").read_text())
    (row,) = result["rows"]
    samples = [json.loads(x) for x in next(a.glob("*/samples.jsonl")).read_text().splitlines()]
    answerable = [s for s in samples if s["score"] is not None]
    assert row["metric"] == "recall@10" and row["n_pairs"] == len(answerable) < len(samples)
    assert row["difference"] is not None and row.get("note") in (None, "")


# --- issue 37: a subset run is noted; issue 38: one colour meaning per page -----------------------


def test_a_subset_run_is_noted_with_both_counts(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_job(a, "0", "t/x", "v", "A", [1.0, 0.0] * 6)
    write_job(b, "0", "t/x", "v", "B", [1.0, 0.0])  # B ran run.limit=2
    result = compare(a, b)
    expected = "paired 2 of A's 12 samples and 2 of B's 2: B ran a subset"
    assert expected in result.rows[0].note
    assert any(expected in note for note in result.notes)
    write_comparison(result, tmp_path / "out")
    assert expected in (tmp_path / "out" / "compare.md").read_text()


def test_one_colour_meaning_per_page(tmp_path: Path) -> None:
    pytest.importorskip("pygal")
    from benchreg.core.figures import FAIL, NA, PASS

    side_a, side_b = tmp_path / "a", tmp_path / "b"
    tasks = {"t/a_better": (1.0, 0.0), "t/b_better": (0.0, 1.0), "t/same": (1.0, 1.0)}
    for i, (task, (score_a, score_b)) in enumerate(tasks.items()):
        write_job(side_a, str(i), task, "v", "A", [score_a] * 40 + [1.0] * 10)
        write_job(side_b, str(i), task, "v", "B", [score_b] * 40 + [1.0] * 10)
    files = write_comparison(compare(side_a, side_b), tmp_path / "out")
    page = (tmp_path / "out" / "compare.html").read_text()
    assert '<td class="pass">A better</td>' in page and '<td class="fail">B better</td>' in page
    assert '<td class="pass">yes: A better</td>' in page
    assert '<td class="fail">yes: B better</td>' in page
    assert 'class="bad"' not in page  # no row-wide red that would mean "significant"
    svg = (tmp_path / "out" / "compare.svg").read_text()
    fills = re.findall(r'<g class="bar" style="fill: (#[0-9a-f]{6})', svg)
    assert fills and sorted(fills) == sorted([PASS, FAIL, NA])
    assert tmp_path / "out" / "compare.svg" in files
