"""Cross-run analyses: read the job folders of a sweep and compare runs (views, conditions).

An analysis is registered by name (`registry.analyses`) as ``fn(jobs, **params) -> AnalysisReport``
and named in a task entry's `analyses`. `python -m benchreg analyze <sweep_dir>` groups the sweep's
jobs by the analyses their tasks name and writes each report as markdown + JSON.

Models are told apart by their identity (`metrics.json` `model_id`: the predictions file's sha256,
the baseline and its params, the server, model and generation settings), never by the display name
alone: two predictions files both called `results.json` are two models. Analyses group jobs with
:func:`system_labels` and index them with :func:`unique_jobs`, which makes two jobs of the same
model, data root, task and view in one sweep a named error (:class:`DuplicateJobError`) instead of
a silent overwrite. :func:`run_analyses` turns such an error into a failed report (its `error`),
so the sweep summary still gets written and says which analysis failed and why.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core.errors import BenchregError

PREDICTIONS_IDENTITY = "predictions:"  # identities of predictions files start so


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
        """The display name (`model.label` when one was given)."""
        return str(self.metrics["model"])

    @property
    def model_id(self) -> str:
        """The system's identity; run folders written before identities existed fall back to the
        display name."""
        return str(self.metrics.get("model_id") or self.metrics["model"])

    @property
    def label(self) -> str | None:
        """The user's `model.label`, when the run had one (from the config in provenance.json)."""
        model = (self.provenance.get("config") or {}).get("model") or {}
        label = model.get("label") if isinstance(model, dict) else None
        return str(label) if label else None

    @property
    def group(self) -> str:
        """The model an analysis puts this job with: its identity; for a predictions file that
        the user labelled (`model.label=`), the label, because one model's predictions for
        several views or tasks are several files (several identities) that only the user can tie
        together. Two jobs of one group, task and view are still an error (:func:`unique_jobs`)."""
        if self.label and self.model_id.startswith(PREDICTIONS_IDENTITY):
            return f"label:{self.label}"
        return self.model_id

    @property
    def data_root(self) -> str:
        return str(self.provenance.get("data_root") or self.metrics.get("data_root") or "")

    @property
    def system_key(self) -> tuple[str, str]:
        """What an analysis groups by: (model group, data root)."""
        return (self.group, self.data_root)

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
    error: str | None = None  # set when the analysis failed (the markdown then says why)


class DuplicateJobError(BenchregError):
    """Two jobs of one sweep have the same model identity, data root, task and view: an analysis
    cannot tell which one to use."""


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
        try:
            reports.append(fn(selected, **ref.get("params", {})))
        except BenchregError as exc:
            name = str(ref["name"])
            message = exc.message.removeprefix(f"analysis {name}: ")
            logger.error(f"analysis {name} failed: {message}")
            reports.append(failed_report(name, message))
    return reports


def failed_report(name: str, message: str) -> AnalysisReport:
    """The report of an analysis that could not run: the error instead of a table."""
    markdown = f"**Analysis `{name}` failed**: {message}\n\nNo result of this analysis is given.\n"
    return AnalysisReport(name, markdown, {"error": message}, error=message)


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

_SHA256 = re.compile(r"[0-9a-f]{64}")
SHORT_IDENTITY_MAX = 48


def short_identity(identity: str) -> str:
    """A readable form of an identity: every sha256 cut to its first 12 hex digits
    (`predictions:sha256=0123456789ab`); an identity that is still long keeps its start and
    gets a 10-hex digest of the whole, so two long identities stay apart."""
    short = _SHA256.sub(lambda m: m.group(0)[:12], identity)
    if len(short) <= SHORT_IDENTITY_MAX:
        return short
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:10]
    return f"{short[: SHORT_IDENTITY_MAX - 12]}…#{digest}"


def system_labels(jobs: Iterable[JobRecord]) -> dict[tuple[str, str], str]:
    """:attr:`JobRecord.system_key` -> a label unique among ``jobs``: the display name (all of
    them, `a / b`, when one model was shown under several names); the short identity in brackets
    when another model shares a name (two files both called `results.json`); `@ <root>` when one
    model ran on several data roots."""
    names: dict[str, list[str]] = {}
    roots: dict[str, list[str]] = {}
    for job in jobs:
        group = job.group
        if job.model not in names.setdefault(group, []):
            names[group].append(job.model)
        if job.data_root not in roots.setdefault(group, []):
            roots[group].append(job.data_root)
    owners: dict[str, set[str]] = {}
    for group, shown in names.items():
        for name in shown:
            owners.setdefault(name, set()).add(group)
    labels: dict[tuple[str, str], str] = {}
    for group, shown in names.items():
        base = " / ".join(shown)
        if any(len(owners[name]) > 1 for name in shown):
            base += f" [{short_identity(group)}]"
        for root in roots[group]:
            labels[(group, root)] = f"{base} @ {root}" if len(roots[group]) > 1 else base
    if len(set(labels.values())) < len(labels):  # short forms collided: show them in full
        labels = {key: f"{label} [{key[0]}]" for key, label in labels.items()}
    return labels


def group_identities(jobs: Iterable[JobRecord]) -> dict[str, list[str]]:
    """Model group -> the identities of its jobs (one, unless a label ties several files)."""
    out: dict[str, list[str]] = {}
    for job in jobs:
        if job.model_id not in out.setdefault(job.group, []):
            out[job.group].append(job.model_id)
    return out


def default_job_key(job: JobRecord) -> tuple[str, str, str, str | None]:
    return (job.group, job.data_root, job.task, job.view)


def unique_jobs(
    jobs: Iterable[JobRecord],
    analysis: str,
    key: Callable[[JobRecord], Hashable] = default_job_key,
) -> dict[Any, JobRecord]:
    """Index jobs by ``key`` (default: model group, data root, task, view). Two jobs with one key
    are an error of the analysis that names both folders: which of them holds the result cannot
    be guessed, and mixing them would report numbers that belong to neither."""
    found: dict[Any, JobRecord] = {}
    for job in jobs:
        k = key(job)
        if k in found:
            first = found[k]
            view = f", view {job.view}" if job.view else ""
            if first.model_id == job.model_id:
                same = f"identity {short_identity(job.model_id)}"
            else:
                same = (
                    f"label {job.label!r} on {short_identity(first.model_id)} and "
                    f"{short_identity(job.model_id)}"
                )
            raise DuplicateJobError(
                f"analysis {analysis}: two jobs of model {job.model!r} ({same}) for task "
                f"{job.task}{view}: {first.dir} and {job.dir}",
                fix="run each model once per task and view in a sweep (different models need "
                "different contents, not just different labels), or analyse the runs in "
                "separate sweep folders",
            )
        found[k] = job
    return found


def model_heading(label: str, identities: Iterable[str]) -> str:
    """A markdown heading for one model: its label, and its identity (identities) in full."""
    found = list(identities)
    what = "model identity" if len(found) == 1 else "model identities (labelled files)"
    return f"### {label}\n\n{what}: " + ", ".join(f"`{i}`" for i in found)


@dataclass(frozen=True, slots=True)
class PairedBinary:
    """Two 0/1 outcomes paired on sample id: discordant counts and the exact McNemar p."""

    n_pairs: int
    hits_a: int
    hits_b: int
    only_a: int  # hit in a, not in b
    only_b: int
    p_mcnemar: float  # two-sided
    p_a_greater: float = 1.0  # one-sided exact McNemar: a hits more often than b

    @property
    def difference(self) -> float:
        """rate(a) - rate(b) over the pairs."""
        return (self.hits_a - self.hits_b) / self.n_pairs if self.n_pairs else 0.0


def paired_binary(a: dict[str, bool], b: dict[str, bool]) -> PairedBinary:
    """Pair two 0/1 outcomes on their common ids. ``p_mcnemar`` is the two-sided exact McNemar
    p; ``p_a_greater`` the one-sided one (H1: a is hit more often than b), i.e. the exact binomial
    P(X >= only_a) with X ~ Bin(only_a + only_b, 1/2)."""
    from benchreg.core.stats import binomial_greater, mcnemar_exact

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
        p_a_greater=binomial_greater(only_a, only_a + only_b, 0.5),
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
