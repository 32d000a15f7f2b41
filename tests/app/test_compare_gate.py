"""`compare --gate --margin M` and the minimum detectable difference (issue 38, item 3).

Every number is checked against something independent of the code under test: the Tango score
statistic against a numerical maximisation of the restricted likelihood, at M = 0 against the
McNemar z-test; the paired t-test against scipy.stats.ttest_1samp; the MDEs against Connor's
sample-size formula, G*Power's textbook sample sizes, and seeded Monte-Carlo power; the gate's
type-I error by simulation at the null's boundary."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize_scalar

from benchreg.app.commands import main as command_main
from benchreg.app.compare import compare, write_comparison
from benchreg.app.compare.power import mde_paired_binary, mde_paired_t
from benchreg.app.compare.regression_test import t_regression, tango_regression
from tests.app.test_report import write_job

# --- the one-sided test that B is worse than A by more than M -------------------------------------


def restricted_score_z(a_only: int, b_only: int, n: int, margin: float) -> float:
    """Tango's statistic with the restricted MLE found numerically (not by the closed form)."""
    delta = -margin

    def minus_loglik(q: float) -> float:
        rest = max(1e-300, 1 - 2 * q - delta)
        return -(
            (b_only * math.log(q + delta) if b_only else 0.0)
            + (a_only * math.log(q) if a_only else 0.0)
            + (n - a_only - b_only) * math.log(rest)
        )

    bounds = (margin + 1e-12, (1 - delta) / 2 - 1e-12)
    q = minimize_scalar(minus_loglik, bounds=bounds, method="bounded", options={"xatol": 1e-13}).x
    return (b_only - a_only - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))


@pytest.mark.parametrize(
    ("a_only", "b_only", "n", "margin"),
    [(30, 10, 40, 0.05), (5, 0, 100, 0.05), (0, 5, 100, 0.1), (20, 15, 200, 0.02), (3, 1, 10, 0.3)],
)
def test_tango_statistic_matches_the_numerical_restricted_mle(
    a_only: int, b_only: int, n: int, margin: float
) -> None:
    result = tango_regression(a_only, b_only, n, margin)
    z = restricted_score_z(a_only, b_only, n, margin)
    assert result.statistic == pytest.approx(z, rel=1e-6)
    assert result.p == pytest.approx(stats.norm.cdf(z), rel=1e-6)


def test_tango_at_margin_zero_is_the_mcnemar_z_test() -> None:
    a_only, b_only, n = 25, 12, 150
    chi2 = (a_only - b_only) ** 2 / (a_only + b_only)  # McNemar without continuity correction
    two_sided = stats.chi2.sf(chi2, df=1)
    assert tango_regression(a_only, b_only, n, 0.0).p == pytest.approx(two_sided / 2, rel=1e-9)


@pytest.mark.parametrize(("n", "q_a", "margin"), [(300, 0.15, 0.05), (40, 0.2, 0.05)])
def test_tango_type_one_error_at_the_boundary_is_near_alpha(
    n: int, q_a: float, margin: float
) -> None:
    rng = np.random.default_rng(0)  # true p_B - p_A = -margin: exactly the null's boundary
    draws = rng.multinomial(n, [q_a, q_a - margin, 1 - 2 * q_a + margin], size=2000)
    rejected = np.mean([tango_regression(int(a), int(b), n, margin).p < 0.05 for a, b, _ in draws])
    assert 0.03 < rejected < 0.07  # 2000 draws: a 95% band of about +-0.01 around 0.05


def test_paired_t_matches_scipy_one_sided() -> None:
    rng = np.random.default_rng(1)
    diffs = rng.normal(-0.08, 0.2, size=40)  # B - A
    expected = stats.ttest_1samp(diffs, popmean=-0.05, alternative="less")
    got = t_regression(float(diffs.mean()), float(diffs.std(ddof=1)), 40, 0.05)
    assert got.statistic == pytest.approx(expected.statistic, rel=1e-9)
    assert got.p == pytest.approx(expected.pvalue, rel=1e-9)


# --- minimum detectable difference ----------------------------------------------------------------


@pytest.mark.parametrize(("effect", "n"), [(0.2, 199), (0.5, 34), (0.8, 15)])
def test_paired_t_mde_matches_gpower_sample_sizes(effect: float, n: int) -> None:
    """G*Power (paired t, two-sided alpha 0.05, power 0.80): d = 0.2, 0.5, 0.8 need n = 199,
    34, 15; so at that n the MDE (sd 1) is just below d, one pair fewer just above."""
    assert mde_paired_t(n, 1.0, 0.05).mde < effect < mde_paired_t(n - 1, 1.0, 0.05).mde


def test_paired_t_mde_tends_to_the_normal_formula() -> None:
    n, sd = 5000, 0.3
    normal = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * sd / math.sqrt(n)
    assert mde_paired_t(n, sd, 0.05).mde == pytest.approx(normal, rel=1e-3)


def test_paired_t_mde_has_80_percent_power_by_simulation() -> None:
    rng = np.random.default_rng(2)
    n, sd = 25, 0.4
    mde = mde_paired_t(n, sd, 0.05).mde
    samples = rng.normal(mde, sd, size=(10000, n))
    power = np.mean(stats.ttest_1samp(samples, 0.0, axis=1).pvalue < 0.05)
    assert power == pytest.approx(0.8, abs=0.02)


@pytest.mark.parametrize(("n", "discordant", "sides"), [(200, 40, 2), (500, 60, 2), (100, 30, 1)])
def test_binary_mde_solves_connors_sample_size_formula(n: int, discordant: int, sides: int) -> None:
    psi, mde = discordant / n, mde_paired_binary(n, discordant, 0.05, sides=sides).mde
    z_a, z_b = stats.norm.ppf(1 - 0.05 / sides), stats.norm.ppf(0.8)
    connor_n = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - mde**2)) ** 2 / mde**2
    assert connor_n == pytest.approx(n, rel=1e-9)


def test_binary_mde_has_80_percent_power_by_simulation() -> None:
    rng = np.random.default_rng(3)
    n, discordant = 400, 60
    psi, mde = discordant / n, mde_paired_binary(n, discordant, 0.05).mde
    draws = rng.multinomial(n, [(psi + mde) / 2, (psi - mde) / 2, 1 - psi], size=10000)
    a, b = draws[:, 0], draws[:, 1]
    z = (a - b) / np.sqrt(np.maximum(a + b, 1))  # the McNemar z-test the formula assumes
    assert np.mean(np.abs(z) > stats.norm.ppf(0.975)) == pytest.approx(0.8, abs=0.02)


def test_mde_says_why_it_cannot_be_estimated() -> None:
    assert mde_paired_binary(50, 0, 0.05).mde is None
    assert "no discordant pair" in mde_paired_binary(50, 0, 0.05).reason
    assert mde_paired_t(1, 1.0, 0.05).mde is None
    assert mde_paired_t(30, 0.0, 0.05).mde is None


# --- the gate on the command line -----------------------------------------------------------------


def _pair(tmp_path: Path, a: list[float], b: list[float], task: str = "t/x") -> tuple[Path, Path]:
    side_a, side_b = tmp_path / "a", tmp_path / "b"
    write_job(side_a, task.replace("/", "_"), task, "v", "A", a)
    write_job(side_b, task.replace("/", "_"), task, "v", "B", b)
    return side_a, side_b


def _gate(side_a: Path, side_b: Path, out: Path, *extra: str) -> int:
    return command_main(["compare", str(side_a), str(side_b), "--out", str(out), *extra])


def test_clearly_worse_b_is_no_go_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a, b = _pair(tmp_path, [1.0] * 150 + [0.0] * 50, [1.0] * 80 + [0.0] * 120)
    assert _gate(a, b, tmp_path / "out", "--gate", "--margin", "0.05") == 1
    out = capsys.readouterr().out
    assert "Release gate (margin 0.05, alpha 0.05): NO-GO" in out
    assert "B is worse than A by more than 0.05 on: t/x [v]" in out
    gate = json.loads((tmp_path / "out" / "compare.json").read_text())["gate"]
    assert gate["verdict"] == "NO-GO" and gate["failing"] == ["t/x [v]"]
    assert gate["rows"][0]["test"].startswith("Tango score test")
    assert "Tango" in gate["method"] and "Holm" in gate["method"]


@pytest.mark.parametrize("b_scores", [[1.0] * 150 + [0.0] * 50, [1.0] * 190 + [0.0] * 10])
def test_equal_or_better_b_is_go_exit_0(tmp_path: Path, b_scores: list[float]) -> None:
    a, b = _pair(tmp_path, [1.0] * 150 + [0.0] * 50, b_scores)
    assert _gate(a, b, tmp_path / "out", "--gate", "--margin", "0.05") == 0
    gate = json.loads((tmp_path / "out" / "compare.json").read_text())["gate"]
    assert gate["verdict"] == "GO" and gate["failing"] == []


def test_continuous_scores_use_the_paired_t_test(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    scores_a = rng.uniform(0.4, 0.9, size=60)
    scores_b = scores_a - 0.2 + rng.normal(0, 0.05, size=60)
    a, b = _pair(tmp_path, list(scores_a), list(scores_b))
    result = compare(a, b, margin=0.05)
    (row,) = result.gate.rows
    expected = stats.ttest_1samp(scores_b - scores_a, -0.05, alternative="less").pvalue
    assert row.test.startswith("paired t-test") and row.p == pytest.approx(expected, rel=1e-9)
    assert result.gate.verdict == "NO-GO"


def test_a_small_task_is_listed_as_underpowered(tmp_path: Path, capsys) -> None:
    a, b = _pair(tmp_path, [1, 0, 1, 1, 0, 1, 0, 1, 1, 0], [1, 1, 0, 1, 0, 1, 0, 0, 1, 1])
    assert _gate(a, b, tmp_path / "out", "--gate", "--margin", "0.05") == 0
    assert "underpowered (could not show a regression of 0.05 at their n): t/x [v]" in (
        capsys.readouterr().out
    )


def test_holm_across_tasks_decides_the_gate(tmp_path: Path) -> None:
    side_a, side_b = tmp_path / "a", tmp_path / "b"
    for i, task in enumerate(("t/one", "t/two")):
        write_job(side_a, str(i), task, "v", "A", [1.0] * 60 + [0.0] * 40)
    write_job(side_b, "0", "t/one", "v", "B", [1.0] * 60 + [0.0] * 40)
    write_job(side_b, "1", "t/two", "v", "B", [1.0] * 30 + [0.0] * 70)  # 30 points worse
    gate = compare(side_a, side_b, margin=0.05).gate
    low, high = sorted(row.p for row in gate.rows)
    first = min(1.0, 2 * low)  # Holm for two p-values: 2 x the smaller, then monotone
    assert sorted(row.p_holm for row in gate.rows) == pytest.approx([first, max(first, high)])
    assert gate.failing == ["t/two [v]"] and gate.verdict == "NO-GO"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--gate"], "--gate needs --margin M"),
        (["--gate", "--margin", "-0.1"], "--margin -0.1 is not a margin"),
        (["--gate", "--margin", "nan"], "--margin nan is not a margin"),
        (["--margin", "0.05"], "--margin is the release gate's margin (add --gate)"),
        (["--gate", "--margin", "0.05", "--alpha", "1.5"], "--alpha 1.5 is outside (0, 1)"),
    ],
)
def test_bad_gate_options_are_one_line_exit_2_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture, extra: list[str], message: str
) -> None:
    a, b = _pair(tmp_path, [1.0, 0.0, 1.0], [1.0, 0.0, 0.0])
    assert _gate(a, b, tmp_path / "out", *extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert not (tmp_path / "out").exists()


def test_gate_without_common_task_or_on_other_data_is_exit_2(tmp_path: Path, capsys) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_job(a, "0", "t/x", "v", "A", [1.0, 0.0])
    write_job(b, "0", "t/y", "v", "B", [1.0, 0.0])
    assert _gate(a, b, tmp_path / "out", "--gate", "--margin", "0.05") == 2
    assert "no task and view in common" in capsys.readouterr().err
    c = tmp_path / "c"
    write_job(c, "0", "t/x", "v", "C", [1.0, 0.0], data_sha="other")
    assert _gate(a, c, tmp_path / "out", "--gate", "--margin", "0.05") == 2
    assert "different data" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_gate_with_no_per_sample_scores_is_exit_2(tmp_path: Path, capsys) -> None:
    a, b = _pair(tmp_path, [1.0, 0.0], [1.0, 0.0])
    for side in (a, b):
        rows = '{"id": "s0", "score": null}\n{"id": "s1", "score": null}\n'
        (next(side.iterdir()) / "samples.jsonl").write_text(rows)
    assert _gate(a, b, tmp_path / "out", "--gate", "--margin", "0.05") == 2
    assert "no task can be gated" in capsys.readouterr().err


def test_a_task_that_cannot_be_gated_makes_the_gate_incomplete_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A GO over the testable tasks only would read as a decision about all of them (the
    PromptCBLUE case: 15 of 16 tasks are corpus-level F1 with no per-sample scores)."""
    side_a, side_b = tmp_path / "a", tmp_path / "b"
    for side, name in ((side_a, "A"), (side_b, "B")):
        write_job(side, "0", "t/one", "v", name, [1.0] * 150 + [0.0] * 50)
        write_job(side, "1", "t/corpus", "v", name, [1.0, 0.0])
        rows = '{"id": "s0", "score": null}\n{"id": "s1", "score": null}\n'
        (side / "1" / "samples.jsonl").write_text(rows)
    assert _gate(side_a, side_b, tmp_path / "out", "--gate", "--margin", "0.05") == 2
    out = capsys.readouterr().out
    assert "Release gate (margin 0.05, alpha 0.05): INCOMPLETE" in out
    assert "1 task of 2 could not be gated" in out and "t/corpus [v]" in out
    gate = json.loads((tmp_path / "out" / "compare.json").read_text())["gate"]
    assert gate["verdict"] == "INCOMPLETE" and gate["untested"] == ["t/corpus [v]"]


# --- MDE in every table ---------------------------------------------------------------------------


def test_every_table_holds_the_mde(tmp_path: Path) -> None:
    a, b = _pair(tmp_path, [1.0] * 150 + [0.0] * 50, [1.0] * 80 + [0.0] * 120)
    result = compare(a, b)
    (row,) = result.rows
    assert row.mde == pytest.approx(mde_paired_binary(200, 70, 0.05).mde)
    write_comparison(result, tmp_path / "out")
    shown = f"{row.mde:.4f}"
    assert json.loads((tmp_path / "out" / "compare.json").read_text())["rows"][0]["mde"] == row.mde
    assert "MDE (80% power)" in (tmp_path / "out" / "compare.md").read_text()
    assert (tmp_path / "out" / "compare.md").read_text().count(shown) == 2  # headline, table
    assert (tmp_path / "out" / "compare.html").read_text().count(shown) == 2


@pytest.mark.slow
def test_real_sweep_gate_fails_random_after_baseline_and_passes_the_reverse(
    cli, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    proc = cli(
        "-m", "task=glob(molp2s/*)", "view=correct", "model=baseline,random",
        f"hydra.sweep.dir={sweep}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    baseline, chance = "baseline:molp2s_rdkit", "random(seed=0)"
    worse = cli("compare", str(sweep), "--a", baseline, "--b", chance, "--gate", "--margin", "0.05")
    assert worse.returncode == 1, worse.stderr
    assert "Release gate (margin 0.05, alpha 0.05): NO-GO" in worse.stdout
    assert "B is worse than A by more than 0.05 on: molp2s/" in worse.stdout
    better = cli(
        "compare", str(sweep), "--a", chance, "--b", baseline, "--gate", "--margin", "0.05",
        "--out", str(tmp_path / "reverse"),
    )  # fmt: skip
    assert better.returncode == 0, better.stderr
    gate = json.loads((tmp_path / "reverse" / "compare.json").read_text())["gate"]
    assert gate["verdict"] == "GO" and len(gate["rows"]) == 15
