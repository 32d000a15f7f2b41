"""Cross-run analyses: read the job folders of a sweep and compare runs (views, conditions).

An analysis is registered by name (`registry.analyses`) as ``fn(jobs, **params) -> AnalysisReport``
and named in a task entry's `analyses`. `python -m benchreg analyze <sweep_dir>` groups the sweep's
jobs by the analyses their tasks name and writes each report as markdown + JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any


@dataclass
class JobRecord:
    """One finished job of a sweep, as written to its folder."""

    dir: Path
    metrics: dict[str, Any]  # metrics.json
    provenance: dict[str, Any]  # provenance.json

    @property
    def task(self) -> str:
        return str(self.metrics["task"])

    @property
    def family(self) -> str:
        return str(self.metrics["family"])

    @property
    def view(self) -> str | None:
        return self.metrics.get("view")

    @property
    def model(self) -> str:
        return str(self.metrics["model"])

    @property
    def task_spec(self) -> dict[str, Any]:
        return dict(self.provenance.get("task_spec", {}))

    @cached_property
    def samples(self) -> list[dict[str, Any]]:
        """Rows of samples.jsonl: id, raw_output, answer, gold, status, score, ..."""
        with (self.dir / "samples.jsonl").open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]


@dataclass(slots=True)
class AnalysisReport:
    name: str
    markdown: str
    data: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # extra files to write, name -> text


def read_jobs(sweep_dir: Path) -> list[JobRecord]:
    """Every job folder under ``sweep_dir`` that has a metrics.json."""
    jobs = []
    for metrics_path in sorted(sweep_dir.rglob("metrics.json")):
        folder = metrics_path.parent
        if (folder / "error.json").exists():
            continue  # the last attempt failed: its folder may hold an earlier run's files
        provenance_path = folder / "provenance.json"
        provenance = (
            json.loads(provenance_path.read_text("utf-8")) if provenance_path.exists() else {}
        )
        jobs.append(JobRecord(folder, json.loads(metrics_path.read_text("utf-8")), provenance))
    return jobs


def run_analyses(jobs: list[JobRecord]) -> list[AnalysisReport]:
    """Run every analysis that the jobs' task entries name, each over the jobs that name it."""
    from benchreg.core import registry

    wanted: dict[str, tuple[dict[str, Any], list[JobRecord]]] = {}
    for job in jobs:
        for ref in job.task_spec.get("analyses", []):
            key = json.dumps(ref, sort_keys=True)
            wanted.setdefault(key, (ref, []))[1].append(job)
    reports = []
    for ref, selected in wanted.values():
        fn = registry.analyses.get(ref["name"])
        reports.append(fn(selected, **ref.get("params", {})))
    return reports


def write_reports(out_dir: Path, reports: list[AnalysisReport]) -> list[Path]:
    from benchreg.core.io import atomic_write_json, atomic_write_text

    written = []
    for report in reports:
        md, js = out_dir / f"analysis_{report.name}.md", out_dir / f"analysis_{report.name}.json"
        atomic_write_text(md, report.markdown)
        atomic_write_json(js, report.data)
        written += [md, js]
        for name, text in report.files.items():
            atomic_write_text(out_dir / name, text)
            written.append(out_dir / name)
    return written


# --- helpers shared by the families' analyses ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairedBinary:
    """Two 0/1 outcomes paired on sample id: discordant counts and the exact McNemar p."""

    n_pairs: int
    hits_a: int
    hits_b: int
    only_a: int  # hit in a, not in b
    only_b: int
    p_mcnemar: float

    @property
    def difference(self) -> float:
        """rate(a) - rate(b) over the pairs."""
        return (self.hits_a - self.hits_b) / self.n_pairs if self.n_pairs else 0.0


def paired_binary(a: dict[str, bool], b: dict[str, bool]) -> PairedBinary:
    from benchreg.core.stats import mcnemar_exact

    keys = sorted(set(a) & set(b))
    only_a = sum(1 for k in keys if a[k] and not b[k])
    only_b = sum(1 for k in keys if b[k] and not a[k])
    return PairedBinary(
        n_pairs=len(keys),
        hits_a=sum(a[k] for k in keys),
        hits_b=sum(b[k] for k in keys),
        only_a=only_a,
        only_b=only_b,
        p_mcnemar=mcnemar_exact(only_a, only_b),
    )


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A GitHub markdown table; floats with 4 decimals, None as an empty cell."""

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def rate_with_ci(hits: int, n: int, digits: int = 3) -> str:
    """`0.300 [0.210, 0.410] (30/100)`: a rate with its Wilson 95% CI and counts."""
    from benchreg.core.stats import wilson_ci

    if n == 0:
        return "n/a (0/0)"
    lo, hi = wilson_ci(hits, n)
    return f"{hits / n:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}] ({hits}/{n})"
