"""`benchreg compare`: pairing, tests, Holm, refusal on different data; end to end on real
sweeps (two seeded random systems: no difference; baseline vs random: baseline better)."""

from __future__ import annotations

import json
import random
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
