"""Issue 21: each family's headline (registered by the family, laid out by the app), the one
meaning of n/denominator, the terminal at the end of a sweep, quiet logs, the CLI's help and
hints, `import` and `view` (in-process, on synthetic sweeps; the browser test renders real ones)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchreg.__main__ import SUBCOMMANDS
from benchreg.app import logs
from benchreg.app.callbacks import print_sweep_end, release_temp_folders
from benchreg.app.commands import main as command_main
from benchreg.app.report import headline as headline_view
from benchreg.app.report import write_report
from benchreg.app.report.samples import BrowserJob, page_data, render
from benchreg.core import registry
from benchreg.core.reporting import Cell, Headline, ReportInput, ReportPart
from benchreg.core.summary import plural, summary_markdown, summary_row, support
from tests.app.conftest import compose_app
from tests.app.test_report import write_job


def part(family: str) -> ReportPart:
    return registry.report_parts.get(family)


def analysis(sweep: Path, name: str, data: dict[str, Any]) -> None:
    sweep.mkdir(parents=True, exist_ok=True)
    (sweep / f"analysis_{name}.json").write_text(json.dumps(data))


# --- the one meaning of n/denominator (item 4) ---------------------------------------------------


def record(n: int, statuses: dict[str, int], metric: dict[str, Any]) -> dict[str, Any]:
    full = {"ok": 0, "missing": 0, "invalid": 0, "out_of_range": 0, "error": 0, **statuses}
    return {"n": n, "statuses": full, "metrics": {"m": metric}, "primary": "m"}


def test_n_is_the_ok_answers_and_the_statuses_beside_it_make_the_difference() -> None:
    # MolP2S' accuracy counts every sample in n: one meaning shows the answered ones
    molp2s = record(16, {"ok": 14, "missing": 1, "invalid": 1}, {"n": 16, "denominator": 16})
    sup = support(molp2s, molp2s["metrics"]["m"])
    assert (sup.text, sup.not_ok_text) == ("14/16", "missing 1, invalid 1")
    # reaction-MC's n is its valid answers already: the same reading
    reaction = record(3, {"ok": 1, "invalid": 2}, {"n": 1, "denominator": 3})
    assert support(reaction, reaction["metrics"]["m"]).text == "1/3"
    assert support(reaction, reaction["metrics"]["m"]).not_ok_text == "invalid 2"
    # a metric over part of the samples (answerable entries) keeps its own n and denominator
    part_of = {"n": 8, "denominator": 9, "detail": {"missing": 1}}
    retrieval = record(12, {"ok": 11, "missing": 1}, part_of)
    sup = support(retrieval, part_of)
    assert (sup.text, sup.not_ok_text) == ("8/9", "missing 1")
    assert support(record(4, {"ok": 4}, {"value": None}), {}).text == ""


def test_the_summary_table_says_what_n_means(tmp_path: Path) -> None:
    rec = {
        "task": "t/x",
        "view": "v",
        "model": "m",
        "primary": "m",
        **record(16, {"ok": 14, "missing": 2}, {"value": 0.5, "n": 16, "denominator": 16}),
    }
    md = summary_markdown([summary_row("000_j", rec, None, answered=True)], answered=True)
    assert "| n/denominator | not ok | 95% CI |" in md
    assert "| 14/16 | missing 2 |" in md and "n/denominator: n = samples answered" in md
    assert "1 of 1 job succeeded." in md


def test_plurals() -> None:
    assert plural(1, "warning") == "1 warning" and plural(2, "warning") == "2 warnings"
    assert plural(1, "analysis", "analyses") == "1 analysis"
    assert plural(3, "analysis", "analyses") == "3 analyses"


# --- the families' headlines (item 1) ------------------------------------------------------------


def test_every_family_registers_a_headline() -> None:
    for family in ("molp2s", "cblue", "reaction_mc", "retrieval"):
        assert part(family).headline is not None, family


def claim(verdict: str, drop: bool | None, flip: bool | None) -> dict[str, Any]:
    def test(passed: bool | None, n: int) -> dict[str, Any]:
        if passed is None:
            return {"passed": None, "missing_views": ["structure_only"]}
        return {"passed": passed, "n_pairs": n, "p_one_sided": 0.004 if passed else 0.5}

    views = {
        v: {"accuracy": a, "ci95": [a - 0.1, a + 0.1], "hits": 1, "n": 16}
        for v, a in (("correct", 0.8), ("shuffled", 0.3), ("counterfactual", 0.7))
    }
    return {
        "views": views,
        "tests": {"shuffle_drop": test(drop, 16), "donor_flip": test(flip, 20)},
        "verdict": verdict,
    }


def test_molp2s_matrix_with_verdicts_as_the_analysis_words_them(tmp_path: Path) -> None:
    models = {
        "m1": {
            "molp2s/gap": claim("a wording of tomorrow", True, True),
            "molp2s/dipole": claim("not supported", True, False),
            "molp2s/raman": claim("not testable", True, None),
        }
    }
    analysis(tmp_path, "molp2s_views", {"alpha": 0.05, "models": models})
    made = part("molp2s").headline(ReportInput("molp2s", tmp_path, []))
    assert made is not None and "(m1)" in made.title
    assert made.columns[:4] == ["property", "correct", "shuffled", "counterfactual"]
    rows = {row[0]: row for row in made.rows}
    gap = rows["gap"]
    assert gap[1] == "0.80 [0.70,\u00a00.90]"  # accuracy [Wilson 95% CI]
    assert isinstance(gap[4], Cell) and gap[4].text == "a wording of tomorrow"
    assert gap[4].tone == "pass"  # coloured by the tests, never by the wording
    assert rows["dipole"][4].tone == "fail" and rows["raman"][4].tone is None
    assert gap[5] == "(a) pass p=0.004 n=16\n(b) pass p=0.004 n=20"
    assert "not run: needs structure_only" in rows["raman"][5]
    assert part("molp2s").headline(ReportInput("molp2s", tmp_path / "none", [])) is None


def test_cblue_overall_first_with_a_ci_then_each_task(tmp_path: Path) -> None:
    tasks = {
        name: {
            "metric": "f1",
            "value": value,
            "n": 4,
            "denominator": 4,
            "ci95": [value - 0.1, value + 0.1],
            "job": f"00{i}_x",
        }
        for i, (name, value) in enumerate((("CMeEE-V2", 0.5), ("CHIP-CTC", 0.3)))
    }
    group = {"model": "m", "view": "dev", "tasks": tasks, "complete": False}
    group |= {"mean_of_present": 0.4, "missing_tasks": ["KUAKE-IR"], "denominator_tasks": 16}
    analysis(tmp_path, "cblue_overall", {"groups": [group], "definition": "mean of 16"})
    job = record(4, {"ok": 3, "invalid": 1}, {"value": 0.5, "n": 4, "denominator": 4})
    job["metrics"] = {"f1": job["metrics"]["m"]}
    made = part("cblue").headline(ReportInput("cblue", tmp_path, [{**job, "job": "000_x"}]))
    assert made is not None
    first = made.rows[0]
    assert first[0].text == "mean of 2 of the 16 tasks: not the overall" and first[0].tone == "fail"
    half = 1.959964 * (0.2 / 3.919928) * 2**0.5 / 2  # two tasks' SEs, mean of 2
    assert first[2] == f"0.4000 [{0.4 - half:.4f}, {0.4 + half:.4f}]"
    by_task = {row[0]: row for row in made.rows[1:]}
    assert by_task["CMeEE-V2"][3:] == ["3/4", "invalid 1"]  # from the job's metrics.json
    assert by_task["CHIP-CTC"][3] == "4/4"  # no record: as the analysis says
    assert any("KUAKE-IR" in note for note in made.footnotes)


def test_reaction_mc_reference_vs_control(tmp_path: Path) -> None:
    pair = {
        "pairs": 9,
        "mean_with_reference": 0.9,
        "mean_without_reference": 0.7,
        "mean_difference": 0.2,
        "ci95": [0.05, 0.35],
        "wilcoxon_p": 0.01,
        "hits_with_reference": 5,
        "hits_without_reference": 2,
        "mcnemar_p": 0.25,
    }
    analysis(
        tmp_path,
        "reaction_mc_reference_gain",
        {"metric": "avg_relative_score", "systems": {"s": {"single_varying": pair}}},
    )
    made = part("reaction_mc").headline(ReportInput("reaction_mc", tmp_path, []))
    assert made is not None
    (row,) = made.rows
    assert row[:5] == ["single_varying", 9, "0.9000", "0.7000", row[4]]
    assert row[4].text == "+0.2000 [+0.0500, +0.3500]" and row[4].tone == "pass"
    assert row[5:] == ["0.01", "5 / 2", "0.25"]


def test_retrieval_gates_from_the_job_records_only(tmp_path: Path) -> None:
    sha = {
        "sets/code.jsonl": "a" * 64,
        "sets/pdf.jsonl": "b" * 64,
        "corpus/manifest.jsonl": "c" * 64,
    }
    gated = {"value": 0.8, "n": 8, "denominator": 9, "ci95": [0.6, 0.9]}
    gated["detail"] = {"gate": ">= 0.9", "pass": False, "missing": 1}
    rec = {
        "task": "retrieval/code",
        "view": "dev",
        "model": "bm25",
        "n": 12,
        "statuses": {"ok": 11, "missing": 1},
        "metrics": {"recall@10": gated, "mrr": {"value": 0.7, "n": 9, "denominator": 9}},
        "sha256": {"data": sha},
    }
    made = part("retrieval").headline(ReportInput("retrieval", tmp_path, [rec]))
    assert made is not None and "bm25" in made.title
    (row,) = made.rows  # only the gated metric
    assert row[:6] == [
        "code",
        "recall@10",
        "0.800 [0.600,\u00a00.900]",
        "8/9",
        "missing 1",
        ">= 0.9",
    ]
    assert row[6].text == "FAIL" and row[6].tone == "fail"
    assert row[7] == f"set\u00a0{'a' * 12}\nmanifest\u00a0{'c' * 12}"
    assert part("retrieval").headline(ReportInput("retrieval", tmp_path, [])) is None


# --- the app lays headlines out (terminal, markdown, HTML) ---------------------------------------

TABLE = Headline(
    "A title",
    ["name", "value", "long text"],
    [["a", 0.5, "word " * 30], [Cell("b", "pass"), 1, "x"]],
    ["a footnote"],
)


def test_text_fits_the_width_and_keeps_no_break_spaces_together() -> None:
    out = headline_view.text(TABLE, 60)
    assert all(len(line) <= 60 for line in out.splitlines())
    assert out.splitlines()[0] == "A title" and "  a footnote" in out
    ci = Headline("t", ["ci"], [["0.31 [0.14,\u00a00.56]"]])
    assert "[0.14,\u00a00.56]" in headline_view.text(ci, 60)
    empty = headline_view.text(Headline("nothing", ["x"], [], ["why"]), 60)
    assert "nothing" in empty and "why" in empty


def test_markdown_and_html_mark_the_tones() -> None:
    md = headline_view.markdown(TABLE)
    assert md.startswith("## A title") and "| **b** | 1 | x |" in md
    page = headline_view.to_html(TABLE, "fam")
    assert (
        '<td class="pass">b</td>' in page and '<section class="headline" id="headline-fam">' in page
    )
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        Headline("t", ["a", "b"], [["x"]])
    with pytest.raises(ValueError, match="tone"):
        Cell("x", "green")


@pytest.fixture
def sweep_with_headline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "sweep"
    write_job(root, "000_a", "molp2s/gap", "correct", "m1", [1, 0, 1, 1])
    write_job(root, "001_b", "molp2s/gap", "shuffled", "m1", [0, 0, 1, 0], error=None)
    original = registry.report_parts.get

    def get(name: str, **kwargs: Any) -> ReportPart:
        if name == "molp2s":
            return ReportPart(headline=lambda data: TABLE)
        return original(name, **kwargs)

    monkeypatch.setattr(registry.report_parts, "get", get)
    return root


def test_the_report_opens_with_the_headline(sweep_with_headline: Path) -> None:
    result = write_report(sweep_with_headline)
    md = result.markdown.read_text()
    first_heading = next(line for line in md.splitlines() if line.startswith("## "))
    assert first_heading == "## A title"
    assert md.index("## A title") < md.index("## Primary metric per task and model")
    assert "[the samples of every job](samples.html)" in md
    page = result.html.read_text()
    assert page.index('<section class="headline"') < page.index("<h2>Primary metric")
    assert 'href="samples.html"' in page and result.samples is not None
    assert result.samples.is_file() and [f for f, _ in result.headlines] == ["molp2s"]


def test_a_headline_that_raises_is_a_note(sweep_with_headline: Path, monkeypatch) -> None:
    def boom(data: ReportInput) -> Headline:
        raise KeyError("views")

    monkeypatch.setattr(registry.report_parts, "get", lambda name, **_: ReportPart(headline=boom))
    result = write_report(sweep_with_headline)
    assert any("molp2s headline skipped: KeyError" in note for note in result.notes)


def test_the_terminal_shows_the_headline_last_and_the_table_when_verbose(
    sweep_with_headline: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    from benchreg.app.callbacks import summarize_sweep

    rows, written, failed = summarize_sweep(sweep_with_headline)
    report = write_report(sweep_with_headline)
    capsys.readouterr()
    print_sweep_end(sweep_with_headline, rows, written, failed, report)
    out = capsys.readouterr().out
    assert out.index("A title") < out.index("2 of 2 jobs succeeded.")
    assert "| 000_a |" not in out and out.rstrip().endswith(str(report.samples))
    monkeypatch.setenv("BENCHREG_VERBOSE", "1")
    print_sweep_end(sweep_with_headline, rows, written, failed, report)
    out = capsys.readouterr().out
    assert "| 000_a |" in out and out.index("| 000_a |") < out.index("A title")


# --- the sample browser (item 2) -----------------------------------------------------------------


def test_the_page_embeds_every_sample_safely(tmp_path: Path) -> None:
    (tmp_path / "prompts.jsonl").write_text(
        json.dumps({"id": "s1", "messages": [{"role": "user", "content": "asked"}]}) + "\n"
    )
    rows = [
        {"id": "s0", "status": "ok", "score": 1.0, "raw_output": "</script><b>x</b>", "gold": 1},
        {"id": "s1", "status": "invalid", "score": 0.0, "raw_output": "y" * 30_000, "meta": {}},
    ]
    job = BrowserJob("000_j", "ok", "t/x", "v", "m", rows=rows, folder=tmp_path)
    data = page_data([job], "title")
    assert [s["i"] for s in data["samples"]] == ["s0", "s1"]
    assert data["samples"][1]["m"] == [{"role": "user", "content": "asked"}]  # prompts.jsonl
    assert "cut at 20000 of 30000 characters" in data["samples"][1]["r"]
    assert data["samples"][1]["x"] == {"meta": {}}
    page = render([job], "title <i>")
    body = page.split('type="application/json">', 1)[1].split("</script>", 1)[0]
    assert "<" not in body and json.loads(body)["samples"][0]["r"] == "</script><b>x</b>"
    assert "title &lt;i&gt;" in page and "default-src 'none'" in page


def test_view_writes_a_run_page_beside_the_run_and_a_sweep_page_in_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = tmp_path / "sweep"
    run = write_job(sweep, "000_a", "molp2s/gap", "correct", "m1", [1, 0])
    assert command_main(["view", str(run)]) == 0
    assert capsys.readouterr().out.strip() == str(sweep / "000_a.samples.html")
    assert not (run / "samples.html").exists()  # a run folder keeps only a run's files
    assert command_main(["view", str(sweep)]) == 0
    assert capsys.readouterr().out.strip() == str(sweep / "report" / "samples.html")
    unfinished = tmp_path / "half"
    unfinished.mkdir()
    (unfinished / "run.json").write_text("{}")
    assert command_main(["view", str(unfinished)]) == 2
    assert "has not finished" in capsys.readouterr().err
    assert command_main(["view", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err


# --- the CLI (item 5) and `import` ---------------------------------------------------------------


def test_help_lists_every_subcommand_and_the_common_overrides() -> None:
    template = compose_app(hydra_node=True).hydra.help.template
    for command in SUBCOMMANDS:
        assert f"python -m benchreg {command}" in template, command
    for override in ("task=", "view=", "model=", "roots.<family>=", "run.limit=", "mode="):
        assert override in template, override
    assert "BENCHREG_VERBOSE=1" in template and "-m" in template
    assert "python -m benchreg import --help lists the sources" in template


def test_import_help_lists_every_registered_source(capsys) -> None:
    from benchreg.app.commands import main as command_main

    assert command_main(["import", "--help"]) == 0
    listed = capsys.readouterr().out
    for name in registry.importers.names():
        assert f"  {name} " in listed or listed.rstrip().endswith(f"  {name}"), name


def test_comma_separated_values_without_m_get_the_hint() -> None:
    from benchreg.app.errors import reword

    with pytest.raises(Exception) as info:
        compose_app("task=molp2s/gap,molp2s/infrared")
    error = reword(info.value)
    assert error is not None and "\n" not in error.message
    assert "add -m: python -m benchreg -m task=molp2s/gap,molp2s/infrared" in error.message


def test_a_word_that_is_no_subcommand_is_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchreg", "veiw", "x"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "did you mean view?" in proc.stderr


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = command_main([command, "--help"])
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 0 and "usage: python -m benchreg" in capsys.readouterr().out


@pytest.fixture
def dummy_importer(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []

    def importer(argv: list[str]) -> int:
        calls.append(argv)
        return 0 if argv != ["--fail"] else 2

    importer.summary = "Import nothing (a test's importer)."  # type: ignore[attr-defined]
    registry.importers.names()  # every family's importers registered first
    monkeypatch.setitem(registry.importers._items, "dummy_source", importer)
    return calls


def test_import_dispatches_to_the_registered_importer(
    dummy_importer: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert command_main(["import", "dummy_source", "--src", "a", "--out", "b"]) == 0
    assert dummy_importer == [["--src", "a", "--out", "b"]]
    assert command_main(["import", "dummy_source", "--fail"]) == 2
    assert command_main(["import", "--help"]) == 0
    listing = capsys.readouterr().out
    assert "dummy_source" in listing and "Import nothing (a test's importer)." in listing
    assert command_main(["import", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown source 'nope'" in err and "dummy_source" in err
    assert command_main(["import"]) == 2
    assert "name a source" in capsys.readouterr().err


def test_an_importer_that_crashes_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(argv: list[str]) -> int:
        raise ValueError("bad\nthing")

    registry.importers.names()
    monkeypatch.setitem(registry.importers._items, "dummy_broken", broken)
    assert command_main(["import", "dummy_broken"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ValueError: bad thing" in err


# --- quiet by default (item 6) -------------------------------------------------------------------


def loguru_record(message: str, level: str = "INFO", line: int = 1) -> dict[str, Any]:
    class Level:
        name = level

    return {
        "level": Level,
        "extra": {},
        "name": "m",
        "function": "f",
        "line": line,
        "message": message,
    }


def test_a_repeated_info_line_is_printed_once(tmp_path: Path) -> None:
    once = logs.Once()
    first = "correct.jsonl: checks skipped (sha256 e8a7f8eaffeb, cache /c)"
    again = "shuffled.jsonl: checks skipped (sha256 9346016c3cca, cache /c)"
    assert once(loguru_record(first)) and not once(loguru_record(again))
    assert once(loguru_record("sweep: job 2 of 60 starts")) and once(
        loguru_record("sweep: job 3 of 60 starts")
    )  # progress lines differ by their numbers: all printed
    assert once(loguru_record(again, "WARNING")) and once(loguru_record(again, "WARNING"))
    assert once.held_back() == [(first, 2)]
    # across processes of one sweep: a marker file in the sweep folder
    other = logs.Once()
    once.shared = other.shared = tmp_path / logs.ONCE_FOLDER
    line = "dev.json: loaded (sha256 0123456789abcdef)"
    assert once(loguru_record(line, line=7)) and not other(loguru_record(line, line=7))


def test_the_repeats_note_counts_what_was_held_back(monkeypatch: pytest.MonkeyPatch) -> None:
    once = logs.Once()
    monkeypatch.setattr(logs, "ONCE", once)
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        once(loguru_record(f"{name}: skipped"))
    note = logs.repeats_note()
    assert note is not None and note.startswith("2 repeated lines not shown (like: a.jsonl")
    assert logs.repeats_note() is None


def test_joblib_temp_folders_are_released_before_the_tracker_stops(tmp_path: Path) -> None:
    import atexit

    called: list[str] = []

    def finalizer() -> None:
        called.append("cleaned")

    atexit.register(finalizer)

    manager = SimpleNamespace(_finalizers={"ctx": finalizer})
    release_temp_folders(manager)
    assert called == ["cleaned"] and manager._finalizers == {}
    release_temp_folders(None)  # no executor: nothing to do
