"""From raw system output to scores: parse, validate, count statuses, score, attach 95% CIs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from loguru import logger

from benchreg.core.errors import BenchregError, ParseError
from benchreg.core.load import ordered_map
from benchreg.core.metric import Metric, MetricValue
from benchreg.core.progress import Progress
from benchreg.core.ranking.gate import Gate
from benchreg.core.stats import (
    bootstrap_mean_ci,
    bootstrap_totals_ci,
    cluster_ids,
    cluster_weights,
    pass_at_k,
    resample_counts,
    resample_indices,
    widen_zero_width,
    wilson_ci,
)
from benchreg.core.task import BoundMetric, Task
from benchreg.core.types import Degraded, Prediction, Sample, Status

STATS_CHUNK = 2000  # samples per call of Metric.stats (progress is reported between chunks)


def parse_and_check(task: Task, samples: Sequence[Sample], preds: list[Prediction]) -> None:
    """Turn raw text into answers (task parser) and validate them (answer schema), in place."""
    parser = task.parser
    schema = task.schema
    for sample, pred in zip(samples, preds, strict=True):
        if pred.status is not Status.OK:
            continue
        if pred.answer is None and pred.raw_text is not None:
            if parser is None:
                pred.status, pred.detail = Status.INVALID, "text output but the task has no parser"
                continue
            try:
                parsed = parser(pred.raw_text, sample)
            except ParseError as exc:
                pred.status, pred.detail = Status.INVALID, f"unparseable: {exc}"
                continue
            if isinstance(parsed, Degraded):
                parsed, pred.degraded = parsed.answer, parsed.reason
            pred.answer = parsed
        checked = schema.check(pred.answer, sample)
        pred.answer, pred.status = checked.answer, checked.status
        if checked.detail:
            pred.detail = checked.detail
        if checked.degraded:
            pred.degraded = checked.degraded
        if pred.metadata.get("finish_reason") == "length" and not pred.degraded:
            pred.degraded = "stopped at the token limit (finish_reason: length)"


def resolve(task: Task, dataset: Any, samples: Sequence[Sample], preds: list[Prediction]) -> None:
    """Run the task's resolver (if any) on every scored prediction, in place. A resolver with
    a ``resolve_many(samples, predictions)`` attribute is given them all in one call (it sets
    ``prediction.resolved`` itself, as the per-pair call would)."""
    if task.resolver is None:
        return
    resolver = task.resolver(dataset)
    scored = [
        (s, p)
        for s, p in zip(samples, preds, strict=True)
        if p.status in (Status.OK, Status.OUT_OF_RANGE)
    ]
    many = getattr(resolver, "resolve_many", None)
    if many is not None:  # a resolver that resolves a whole run at once (e.g. with numpy)
        many([s for s, _ in scored], [p for _, p in scored])
        return
    for sample, pred in scored:
        pred.resolved = resolver(sample, pred)


def status_counts(preds: Sequence[Prediction]) -> dict[str, int]:
    """How many predictions ended in each status (every status listed; they sum to n)."""
    counts = {status.value: 0 for status in Status}
    for pred in preds:
        counts[pred.status.value] += 1
    return counts


def task_counts(
    task: Task, samples: Sequence[Sample], preds: Sequence[Prediction]
) -> dict[str, int]:
    """The family's own counts (never a status name: those mean one thing in every family)."""
    if task.counts is None:
        return {}
    counts = task.counts(samples, preds)
    clash = set(counts) & {s.value for s in Status}
    if clash:
        raise ValueError(
            f"counts function {task.counts.name!r} redefines status counts {sorted(clash)}"
        )
    return counts


@dataclass(slots=True)
class Scores:
    values: dict[str, MetricValue]  # output name -> value with n, denominator, CI
    per_sample: dict[str, np.ndarray]  # output name -> per-sample scores, where they exist
    primary: str


def score(
    task: Task,
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    progress: bool = True,
) -> Scores:
    """Every metric of the task over the samples, with a 95% CI where asked for. The bootstrap
    resamples (the same for every metric: they depend on n, n_boot, seed and the task's
    clusters only) are drawn once and applied to every metric that needs them
    (:class:`_SharedBootstrap`)."""
    bound = task.metrics
    per_sample: dict[str, np.ndarray] = {}
    primary = ""
    tracker = Progress(f"{task.name}: scoring", len(samples) * len(bound), enabled=progress)
    clusters, note = _usable_clusters(task_clusters(task, samples))
    if clusters is not None and n_boot <= 0:  # no resampling (run.bootstrap=0): Wilson stays
        clusters, note = None, "bootstrap off: samples treated as independent (too narrow)"
    boot = _SharedBootstrap(len(samples), n_boot, seed, clusters)
    done = []
    for item in bound:
        metric = item.metric
        stats = _stats(metric, samples, preds, tracker)
        n = len(samples)
        # through `totals` (unit weights), as the bootstrap does: statistics may be ids
        point = np.atleast_1d(metric.reduce(metric.totals(stats, np.ones((1, n)))[0], n))
        support, denominator = metric.support(stats, preds)
        sample_scores = metric.sample_scores(stats)
        query_scores = metric.query_scores(stats) if sample_scores is None else None
        units = sample_scores if sample_scores is not None else query_scores
        cis = _cis(item, stats, units, n_boot, boot)
        done.append((item, point, (support, denominator), metric.detail(stats), cis, units))
        for i, name in enumerate(item.names):
            if units is not None:
                per_sample[name] = units[:, i]
        if item.ref.primary:
            primary = item.primary_name
    intervals = boot.run()
    values: dict[str, MetricValue] = {}
    for item, point, (support, denominator), detail, cis, units in done:
        for i, name in enumerate(item.names):
            ci, method = cis[i] if cis else (None, None)
            if isinstance(ci, _Pending):
                ci = intervals[ci.job][ci.output]
            value = MetricValue(float(point[i]), support, denominator, ci, method, dict(detail))
            column = units[:, i] if units is not None else None
            _name_not_ok(value, column, preds)
            values[name] = _finish_interval(item.metric, value, column, clusters)
            if note and value.ci95 is not None:
                value.detail["ci_note"] = note
    tracker.finish()
    return Scores(values, per_sample, primary)


def task_clusters(task: Task, samples: Sequence[Sample]) -> np.ndarray | None:
    """Each sample's cluster index when the task names a ``cluster`` path, else None. A
    sample without a value at the path is a cluster of its own (nothing says what it shares)."""
    path = getattr(task.spec, "cluster", None)
    if path is None:
        return None
    keys: list[object] = []
    for i, sample in enumerate(samples):
        key = cluster_key(sample, path)
        keys.append(("", i) if key is None else ("=", key))
    return cluster_ids(keys)


def _usable_clusters(clusters: np.ndarray | None) -> tuple[np.ndarray | None, str | None]:
    """The clusters to resample, and a note when there are too few: resampling one cluster
    gives the same data every time (no width), so one cluster falls back to the samples, and
    the interval says it treats them as independent."""
    if clusters is None or len(np.unique(clusters)) >= 2:
        return clusters, None
    return None, "one cluster only: samples resampled as if independent (too narrow)"


def cluster_key(sample: Sample, path: str) -> str | None:
    """The value at a dotted path into the sample (``meta.release.parent_table_id``,
    ``gold.0.source_id``: a number indexes a list), as JSON text; None where there is none."""
    root, *rest = path.split(".")
    node: Any = getattr(sample, root)
    for part in rest:
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list | tuple) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return None if node is None else _answer_key(node)


def _name_not_ok(
    value: MetricValue, column: np.ndarray | None, preds: Sequence[Prediction]
) -> None:
    """A value over part of the samples (those with a per-sample score, e.g. the answerable
    ones) gets the statuses of its not-ok answers in the status words of `statuses`
    (``detail.not_ok``, e.g. ``{"invalid": 50}`` of a run's 58): the tables name them so."""
    if column is None or value.denominator is None or value.denominator == len(preds):
        return
    counted = ~np.isnan(column)
    if int(counted.sum()) != value.denominator:
        return  # the value is not over the samples with a score: nothing to name
    found = Counter(p.status for p, c in zip(preds, counted, strict=True) if c and not p.ok)
    if found:
        value.detail["not_ok"] = {s.value: found[s] for s in Status if found[s]}


def _finish_interval(
    metric: Metric, value: MetricValue, column: np.ndarray | None, clusters: np.ndarray | None
) -> MetricValue:
    """The last word on a value's interval: the cluster count of a cluster bootstrap, a
    zero-width interval widened (:func:`widen_zero_width`), and the metric's gate
    judged on the interval (:meth:`Gate.verdict`)."""
    if value.ci95 is not None and clusters is not None:
        value.clusters = _clusters_counted(clusters, column)
    if metric.unit_range and value.ci95 is not None:
        units = value.clusters if value.clusters is not None else value.denominator
        wider = widen_zero_width(value.value, value.ci95, units)
        if wider is not None:
            value.ci95 = wider
            value.detail["ci_note"] = _ZERO_WIDTH_NOTE.format(units=units)
            if clusters is None:
                value.ci_method = ZERO_WIDTH_METHOD
    gate = getattr(metric, "gate", None)
    if isinstance(gate, Gate) and "gate" in value.detail:
        demonstration = bool(value.detail.get("demonstration_entries"))
        value.detail.update(gate.verdict(value.value, value.ci95, demonstration=demonstration))
    return value


ZERO_WIDTH_METHOD = "wilson (bootstrap had no width)"
_ZERO_WIDTH_NOTE = (
    "every resample gave the same value (no width): Wilson interval of the value as a "
    "proportion of the {units} units (samples, or clusters)"
)


def _clusters_counted(clusters: np.ndarray, column: np.ndarray | None) -> int:
    """The clusters of the samples a value counts (those with a per-sample score, where there
    are per-sample scores; else every sample's)."""
    if column is not None:
        clusters = clusters[~np.isnan(column)]
    return len(np.unique(clusters))


def _stats(
    metric: Metric, samples: Sequence[Sample], preds: Sequence[Prediction], tracker: Progress
) -> np.ndarray:
    chunks = []
    for start in range(0, len(samples), STATS_CHUNK):
        end = start + STATS_CHUNK
        chunks.append(np.asarray(metric.stats(samples[start:end], preds[start:end]), float))
        tracker.advance(len(chunks[-1]))
    if not chunks:
        return np.zeros((0, 0))
    return np.concatenate(chunks)


@dataclass(frozen=True, slots=True)
class _Pending:
    """A bootstrap CI to be filled in by :meth:`_SharedBootstrap.run`."""

    job: int
    output: int


BOOT_CELLS = 250_000  # resample counts of one chunk of _SharedBootstrap (2 MB as floats)


class _SharedBootstrap:
    """Percentile bootstrap CIs of several metrics over the same resamples: what
    :func:`benchreg.core.stats.bootstrap_totals_ci` gives each of them, with the resample
    weights drawn once for all, and the column totals of every metric that keeps the default
    `totals` (``weights @ stats``) from one matrix product over their distinct columns (a
    column of zeros totals 0 and one of ones totals n in every resample: no product)."""

    def __init__(self, n: int, n_boot: int, seed: int, clusters: np.ndarray | None = None) -> None:
        self.n, self.n_boot, self.seed = n, n_boot, seed
        self.clusters = clusters  # sample i's cluster index: whole clusters are resampled
        self.jobs: list[tuple[Metric, np.ndarray]] = []

    def add(self, metric: Metric, stats: np.ndarray) -> int:
        self.jobs.append((metric, stats))
        return len(self.jobs) - 1

    def run(self) -> list[list[tuple[float, float]]]:
        if not self.jobs:
            return []
        n = self.n
        plain = [j for j, (m, _) in enumerate(self.jobs) if type(m).totals is Metric.totals]
        bounds = np.cumsum([0] + [self.jobs[j][1].shape[1] for j in plain]).tolist()
        where = {j: (bounds[i], bounds[i + 1]) for i, j in enumerate(plain)}
        product = _ColumnTotals(
            np.concatenate([self.jobs[j][1] for j in plain], axis=1) if plain else None
        )
        jobs, clusters = self.jobs, self.clusters
        units = n if clusters is None else int(clusters.max()) + 1

        def chunk_values(idx: np.ndarray) -> list[np.ndarray]:
            weights = resample_counts(idx, units)
            if clusters is not None:
                weights = cluster_weights(weights, clusters)
            totals = product(weights)
            out = []
            for j, (metric, stats) in enumerate(jobs):
                if j in where:
                    lo, hi = where[j]
                    part = totals[:, lo:hi]
                else:
                    part = metric.totals(stats, weights)
                out.append(np.atleast_2d(metric.reduce(part, n).reshape(len(weights), -1)))
            return out

        values: list[list[np.ndarray]] = [[] for _ in jobs]
        indices = resample_indices(units, self.n_boot, self.seed, BOOT_CELLS)
        # the draws in order here; each chunk's counts, totals and values on two threads (numpy
        # runs them without the GIL): the same values as one chunk after another
        for chunk in ordered_map(chunk_values, indices):
            for j, rows in enumerate(chunk):
                values[j].append(rows)
        out = []
        for rows in values:
            lo, hi = np.percentile(np.concatenate(rows), [2.5, 97.5], axis=0)
            out.append([(float(a), float(b)) for a, b in zip(lo, hi, strict=True)])
        return out


class _ColumnTotals:
    """``weights @ columns``, multiplying only the distinct columns that are not all 0 or 1."""

    def __init__(self, columns: np.ndarray | None) -> None:
        self.k = 0 if columns is None else columns.shape[1]
        if columns is None or not len(columns):
            self.zeros = self.ones = np.zeros(self.k, dtype=bool)
            self.distinct, self.inverse = None, np.zeros(0, dtype=np.int64)
            self.columns = columns
            return
        self.columns = columns
        self.zeros = ~np.any(columns != 0.0, axis=0)
        self.ones = ~np.any(columns != 1.0, axis=0)
        rest = ~(self.zeros | self.ones)
        self.rest = np.flatnonzero(rest)
        # distinct columns by their bytes: np.unique(axis=0) would sort them as structured
        # records, which is slow for long columns
        rows = np.ascontiguousarray(columns[:, rest].T)
        first: dict[bytes, int] = {}  # a column's bytes -> its index among the distinct ones
        picks: list[int] = []
        inverse: list[int] = []
        for i, row in enumerate(rows):
            j = first.setdefault(row.tobytes(), len(picks))
            if j == len(picks):
                picks.append(i)
            inverse.append(j)
        self.distinct = np.ascontiguousarray(rows[picks].T)
        self.inverse = np.asarray(inverse, dtype=np.int64)

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        out = np.zeros((len(weights), self.k))
        if self.columns is None or not self.k:
            return out
        if not len(self.columns):
            return weights @ self.columns
        out[:, self.ones] = weights.sum(axis=1, keepdims=True)
        if len(self.rest):
            out[:, self.rest] = (weights @ self.distinct)[:, self.inverse]
        return out


def _cis(
    item: BoundMetric,
    stats: np.ndarray,
    scores: np.ndarray | None,
    n_boot: int,
    boot: _SharedBootstrap,
) -> list[tuple[tuple[float, float] | _Pending | None, str | None]] | None:
    """Per output: Wilson for 0/1 per-sample scores (``scores``: per-sample or per-query, NaN
    where a query does not count), else a percentile bootstrap over the per-sample statistics
    (every metric, unless its entry says `ci: none`; filled in by ``boot.run()``). A task with
    clusters gets a cluster bootstrap for every interval: Wilson assumes independent samples."""
    ref = item.ref
    if ref.ci == "none":
        return None
    n = len(stats)
    clustered = boot.clusters is not None
    out: list[tuple[tuple[float, float] | _Pending | None, str | None]] = []
    job: int | None = None
    for i in range(len(item.names)):
        column = scores[:, i] if scores is not None else None
        counted = column[~np.isnan(column)] if column is not None else None
        binary = counted is not None and bool(np.isin(counted, (0.0, 1.0)).all())
        if not clustered and (ref.ci == "wilson" or (ref.ci == "auto" and binary)):
            if counted is None or not binary:
                raise BenchregError(
                    f"metric {ref.name!r} has no 0/1 per-sample scores for a Wilson CI",
                    fix="use `ci: bootstrap`",
                )
            out.append((wilson_ci(int(counted.sum()), len(counted)), "wilson"))
            continue
        if n_boot <= 0 or n == 0:
            out.append((None, None))
            continue
        if job is None:
            job = boot.add(item.metric, stats)
        out.append((_Pending(job, i), CLUSTER_METHOD if clustered else f"bootstrap({n_boot})"))
    return out


CLUSTER_METHOD = "cluster bootstrap"  # ci_method of an interval that resampled whole clusters


def strict_view(preds: Sequence[Prediction]) -> list[Prediction] | None:
    """The predictions with every answer read only by a fallback counted as invalid (None when
    no answer was degraded: the strict view is then the lenient one)."""
    if not any(p.degraded and p.status is Status.OK for p in preds):
        return None
    return [
        replace(p, status=Status.INVALID, detail=f"degraded: {p.degraded}")
        if p.degraded and p.status is Status.OK
        else p
        for p in preds
    ]


ANSWER_PREVIEW_ITEMS = 10  # of a long list in an answer read from the inputs, rows keep these


def answer_preview(answer: Any) -> tuple[Any, dict[str, int] | None]:
    """An object answer with each list value longer than :data:`ANSWER_PREVIEW_ITEMS` (e.g. a
    retrieval answer's ranked ``results``) cut to its first items, and the full lengths of what
    was cut, or None. Any other answer is kept whole: an answer that is itself a list is the
    answer (e.g. PromptCBLUE's extracted entities, which its results.json is rebuilt from)."""
    if not isinstance(answer, dict):
        return answer, None
    limit = ANSWER_PREVIEW_ITEMS
    cut = {
        key: len(value)
        for key, value in answer.items()
        if isinstance(value, Sequence) and not isinstance(value, str | bytes) and len(value) > limit
    }
    if not cut:
        return answer, None
    return {k: _head(v, limit) if k in cut else v for k, v in answer.items()}, cut


def _head(items: Sequence[Any], limit: int) -> Any:
    """The first ``limit`` items: as JSON text already encoded where the sequence can give it
    (``json_head``: a columnar run's results, no dict built per result), else as a list."""
    head = getattr(items, "json_head", None)
    encoded = head(limit) if head is not None else None
    return encoded if encoded is not None else list(items[:limit])


def sample_rows(
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    per_sample: dict[str, np.ndarray],
    primary: str,
    *,
    preview_answers: bool = False,
) -> list[dict[str, Any]]:
    """Rows of samples.jsonl: id, raw output, parsed answer, status, score(s), the sample's
    meta but its keys starting with ``_`` (what a loader keeps of the inputs for its own checks,
    e.g. a PromptCBLUE target text: the data file holds it, its sha256 is recorded).

    With ``preview_answers`` (answers read from a predictions file, or made from the inputs by
    a baseline), a long list in an answer is kept to its first items (:func:`answer_preview`)
    and ``answer_cut`` gives the full lengths: a run file of 100 results per query is not
    written out again (its sha256 is in metrics.json)."""
    rows = []
    # each metric's scores as JSON values once (None where it does not apply), not per row
    columns = {
        name: [None if v != v else v for v in np.asarray(values, dtype=float).tolist()]
        for name, values in per_sample.items()
    }
    primary_column = columns.get(primary) or [None] * len(samples)
    several = len(columns) > 1
    private: dict[tuple[str, ...], bool] = {}  # meta key set -> has a key starting with "_"
    for i, (sample, pred) in enumerate(zip(samples, preds, strict=True)):
        answer, cut = pred.answer, None
        if preview_answers and isinstance(answer, dict):
            answer, cut = answer_preview(answer)
        row: dict[str, Any] = {
            "id": sample.id,
            "raw_output": pred.raw_text,
            "answer": answer,
            "gold": sample.gold,
            "status": pred.status.value,
            "score": primary_column[i],
        }
        if cut:
            row["answer_cut"] = cut
        if several:
            row["scores"] = {name: column[i] for name, column in columns.items()}
        _add_prediction_notes(row, pred)
        meta = _public_meta(sample.meta, private)
        if meta:
            row["meta"] = meta
        rows.append(row)
    return rows


def _add_prediction_notes(row: dict[str, Any], pred: Prediction) -> None:
    """What the prediction says beside its answer, where it says anything."""
    if pred.detail:
        row["detail"] = pred.detail
    if pred.degraded:
        row["degraded"] = pred.degraded
    if pred.latency_s is not None:
        row["latency_s"] = pred.latency_s
    if pred.metadata:
        row["metadata"] = pred.metadata


def _public_meta(meta: Any, private: dict[tuple[str, ...], bool]) -> Any:
    """The sample's meta without its ``_`` keys (``private`` remembers which key sets have
    one, so most samples' meta is taken as it is)."""
    if not meta:
        return meta
    keys = tuple(meta)
    hidden = private.get(keys)
    if hidden is None:
        hidden = private[keys] = any(k.startswith("_") for k in keys)
    if hidden or type(meta) is not dict:
        return {k: v for k, v in meta.items() if not k.startswith("_")}
    return meta


# --- option probabilities (model.scoring=logprobs) ---------------------------------------------
#
# A choice answer scored from the model's option probabilities (`metadata.option_probs`, one per
# option, summing to 1) gets, beside the task's own metrics: log loss, Brier score and expected
# calibration error, with the reliability diagram's bins in the ECE's detail; and `option_mass`
# (`metadata.option_mass`: how much of the model's probability the options got before being
# normalised) summarised, with a warning when too many samples gave the options little of it.

PROB_SUM_TOLERANCE = 1e-6  # option probabilities must sum to 1 within this
RELIABILITY_BINS = 10
# A sample whose options got less than half of the model's probability is scored on what the
# model would mostly not have written there (the normalised probabilities rank the leftovers);
# the run warns when more than a tenth of its samples are so.
LOW_OPTION_MASS = 0.5
LOW_MASS_SHARE = 0.1
# An option missing from the server's top alternatives gets the smallest listed one's
# probability, an upper bound (`metadata.options_bounded`): harmless for the likeliest option,
# but log loss, Brier and ECE then lean on guesses; the run warns when more than a quarter of
# the option probabilities are such bounds (more alternatives, `model.top_logprobs`, fix it).
BOUNDED_SHARE = 0.25


def _correct_set(gold: Any) -> set[int] | None:
    """The correct options: an index, or a list of them (reaction-MC keeps ties)."""
    if isinstance(gold, bool):
        return None
    if isinstance(gold, int):
        return {gold}
    if (
        isinstance(gold, list | tuple)
        and gold
        and all(isinstance(g, int) and not isinstance(g, bool) for g in gold)
    ):
        return set(gold)
    return None


class _ProbabilityRows:
    """Each scored sample's log loss, Brier score, top-choice confidence and correctness."""

    def __init__(self) -> None:
        self.losses: list[float] = []
        self.briers: list[float] = []
        self.confidence: list[float] = []
        self.correct: list[float] = []
        self.rows: list[int] = []  # the index of each scored sample (for its cluster)
        self.sum_error = 0.0
        self.worst = 0  # samples without an answer, scored as the worst wrong answer

    def add(self, sample: Sample, pred: Prediction, row: int = 0) -> None:
        probs = pred.metadata.get("option_probs")
        good = _correct_set(sample.gold)
        if good is not None and pred.status not in (Status.OK, Status.OUT_OF_RANGE):
            self._add_worst(good, row)
            return
        if not probs or good is None:
            return
        p = np.asarray(probs, dtype=float)
        self.sum_error = max(self.sum_error, abs(float(p.sum()) - 1.0))
        if self.sum_error > PROB_SUM_TOLERANCE:
            raise ValueError(f"option probabilities of {sample.id} sum to {p.sum()!r}, not 1")
        inside = [g for g in good if 0 <= g < len(p)]
        if not inside:
            return
        target = np.zeros_like(p)
        target[inside] = 1.0 / len(inside)
        self.losses.append(-float(np.log(max(float(p[inside].sum()), 1e-12))))
        self.briers.append(float(((p - target) ** 2).sum()))
        self.confidence.append(float(p.max()))
        self.correct.append(float(int(p.argmax()) in good))
        self.rows.append(row)

    def _add_worst(self, good: set[int], row: int) -> None:
        """An invalid, missing or failed answer has no probabilities: it scores as the worst
        wrong answer, all mass on one wrong option (log loss at the 1e-12 floor, Brier
        ``1 + 1/|G|``, confidence 1 and wrong), never better than a wrong answer."""
        self.losses.append(-float(np.log(1e-12)))
        self.briers.append(1.0 + 1.0 / len(good))
        self.confidence.append(1.0)
        self.correct.append(0.0)
        self.rows.append(row)
        self.worst += 1


def probability_scores(
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    clusters: np.ndarray | None = None,
) -> dict[str, MetricValue]:
    """`log_loss`, `brier` and `ece` over the samples whose answer carries option
    probabilities (none: an empty dict).

    Per sample with correct set G (one gold index, or several tied ones): log loss
    ``-ln(sum_{i in G} p_i)``; Brier ``sum_i (p_i - y_i)^2`` with ``y_i = 1/|G|`` on G (the
    multi-class Brier score, 0..2); ECE over the top choice in ``RELIABILITY_BINS`` equal-width
    confidence bins, ``sum_b n_b/n |accuracy_b - confidence_b|``. A missing, invalid or failed
    answer scores as the worst wrong answer (``_ProbabilityRows._add_worst``; counted in the
    detail as ``scored_as_worst``); an ok answer without probabilities is left out: ``n``
    counts the samples scored. Each has a
    percentile-bootstrap CI over the scored samples (whole clusters with ``clusters``, sample
    i's cluster index). Beside them `option_mass` (:func:`option_mass_summary`), with a
    warning when it is low."""
    if not any(pred.metadata and "option_probs" in pred.metadata for pred in preds):
        return {}
    mass = option_mass_summary(preds, len(samples), n_boot=n_boot, seed=seed)
    per = _ProbabilityRows()
    for row, (sample, pred) in enumerate(zip(samples, preds, strict=True)):
        per.add(sample, pred, row)
    if not per.losses:
        return {"option_mass": mass} if mass is not None else {}
    n, total = len(per.losses), len(samples)
    common = {"probabilities_sum_to_1_within": PROB_SUM_TOLERANCE, "max_sum_error": per.sum_error}
    common["scored_as_worst"] = per.worst
    groups = cluster_ids(clusters[per.rows].tolist()) if clusters is not None else None
    groups, _ = _usable_clusters(groups)
    boot = {"n_boot": n_boot, "seed": seed, "clusters": groups}
    method = CLUSTER_METHOD if groups is not None else f"bootstrap({n_boot})"
    out = {}
    for name, values, what in (
        ("log_loss", per.losses, "mean -ln P(correct option)"),
        ("brier", per.briers, "mean multi-class Brier score (0 best, 2 worst)"),
    ):
        interval = None
        if n_boot > 0 and n >= 2:
            interval = bootstrap_mean_ci(values, **boot)
        out[name] = MetricValue(
            float(np.mean(values)), n, total, interval, method, {"means": what, **common}
        )
    out["ece"] = _ece_value(per, total, boot, method, common)
    for value in out.values():
        value.clusters = _cluster_count(groups) if value.ci95 is not None else None
    if mass is not None:
        out["option_mass"] = mass
    return out


def _ece_value(
    per: _ProbabilityRows,
    total: int,
    boot: dict[str, Any],
    method: str,
    common: dict[str, Any],
) -> MetricValue:
    """The ECE with its reliability bins and its bootstrap CI (``boot``: n_boot, seed,
    clusters)."""
    confidence, correct = np.asarray(per.confidence), np.asarray(per.correct)
    ece, bins = _calibration(confidence, correct)
    detail = {
        "means": f"expected calibration error of the top choice, {RELIABILITY_BINS} "
        "equal-width confidence bins",
        "reliability": bins,
        "mean_confidence": float(np.mean(confidence)),
        "accuracy_of_top_choice": float(np.mean(correct)),
        **common,
    }
    n = len(confidence)
    interval = ece_ci(confidence, correct, **boot) if boot["n_boot"] > 0 and n >= 2 else None
    return MetricValue(ece, n, total, interval, method, detail)


def ece_ci(
    confidence: np.ndarray,
    correct: np.ndarray,
    *,
    n_boot: int,
    seed: int,
    clusters: np.ndarray | None = None,
) -> tuple[float, float]:
    """Percentile-bootstrap CI of the ECE over samples (or clusters): per sample one column
    per confidence bin holding ``correct - confidence`` in its own bin, so a resample's ECE is
    ``sum_b |weighted column total b| / n`` (the bins as :func:`_calibration` draws them)."""
    which = _bin_of(confidence)
    stats = np.zeros((len(confidence), RELIABILITY_BINS))
    stats[np.arange(len(confidence)), which] = correct - confidence
    return bootstrap_totals_ci(
        stats,
        lambda s, w: w @ s,
        lambda t, size: np.abs(t).sum(axis=-1, keepdims=True) / size,
        n_boot=n_boot,
        seed=seed,
        clusters=clusters,
    )[0]


def _bin_of(confidence: np.ndarray) -> np.ndarray:
    edges = np.linspace(0.0, 1.0, RELIABILITY_BINS + 1)
    return np.clip(np.digitize(confidence, edges[1:-1], right=True), 0, RELIABILITY_BINS - 1)


def option_mass_summary(
    preds: Sequence[Prediction], total: int, *, n_boot: int = 1000, seed: int = 0
) -> MetricValue | None:
    """The probability the model put on the options (`metadata.option_mass` of each answer
    that has one, before normalising): mean (bootstrap CI), min, and the share of samples under
    ``LOW_OPTION_MASS``; one warning line when that share exceeds ``LOW_MASS_SHARE``."""
    masses = [
        float(m)
        for pred in preds
        if pred.metadata
        and isinstance(m := pred.metadata.get("option_mass"), int | float)
        and not isinstance(m, bool)
    ]
    if not masses:
        return None
    n, mean, low = len(masses), float(np.mean(masses)), min(masses)
    under = sum(1 for m in masses if m < LOW_OPTION_MASS)
    interval = None
    if n_boot > 0 and n > 1:
        interval = bootstrap_mean_ci(masses, n_boot=n_boot, seed=seed)
    detail = {
        "means": "mean probability the model put on the options before they were normalised "
        "(1: it writes only options there)",
        "min": low,
        "threshold": LOW_OPTION_MASS,
        "under_threshold": under,
        "share_under_threshold": under / n,
        "warn_share": LOW_MASS_SHARE,
        **bounded_options(preds),
    }
    method = f"bootstrap({n_boot})" if interval is not None else None
    if under / n > LOW_MASS_SHARE:
        logger.warning(
            f"the options got little of the model's probability: {under} of {n} samples put "
            f"less than {LOW_OPTION_MASS:.0%} on them (option_mass mean {mean:.2%}, min "
            f"{low:.2%}); their option probabilities rank what the model would rarely write "
            "there (check that the prompt asks for the answer as scored, and that the server "
            "continued the reply where the option is written)"
        )
    return MetricValue(mean, n, total, interval, method, detail)


def bounded_options(preds: Sequence[Prediction]) -> dict[str, Any]:
    """How many option probabilities are upper bounds (options the server's top alternatives
    did not list), of how many, in how many samples; one warning line past ``BOUNDED_SHARE``."""
    bounded = options = samples = 0
    for pred in preds:
        probs = pred.metadata.get("option_probs") if pred.metadata else None
        count = pred.metadata.get("options_bounded") if probs else None
        if not isinstance(count, int) or isinstance(count, bool):
            continue  # no option probabilities, or recorded before the count was kept
        bounded, options, samples = bounded + count, options + len(probs), samples + (count > 0)
    if not options:
        return {}
    share = bounded / options
    if share > BOUNDED_SHARE:
        logger.warning(
            f"{bounded} of {options} option probabilities ({share:.0%}, in {samples} samples) "
            "are upper bounds: the server's top alternatives did not list those options "
            "(log loss, Brier and ECE lean on them; raise model.top_logprobs)"
        )
    return {
        "options_bounded": bounded,
        "options_scored": options,
        "samples_with_bounded": samples,
        "share_bounded": share,
        "bounded_warn_share": BOUNDED_SHARE,
    }


def _calibration(confidence: np.ndarray, correct: np.ndarray) -> tuple[float, list[dict]]:
    """ECE and the reliability diagram's bins (confidence range, count, mean confidence and
    accuracy of the samples in it)."""
    edges = np.linspace(0.0, 1.0, RELIABILITY_BINS + 1)
    which = _bin_of(confidence)
    ece, bins = 0.0, []
    for b in range(RELIABILITY_BINS):
        inside = which == b
        count = int(inside.sum())
        row: dict[str, Any] = {"lo": round(float(edges[b]), 6), "hi": round(float(edges[b + 1]), 6)}
        row["n"] = count
        if count:
            conf, acc = float(confidence[inside].mean()), float(correct[inside].mean())
            row.update(confidence=conf, accuracy=acc)
            ece += count / len(confidence) * abs(acc - conf)
        bins.append(row)
    return float(ece), bins


# --- repeated samples (run.repeats=k) ----------------------------------------------------------
#
# Each repeat is parsed, checked and scored as a run of its own. Beside the first repeat's
# metrics (the run's own), for every metric output that has per-sample scores:
# `<name>_repeats_mean` (mean@k: the mean over the k repeats, its 95% CI a bootstrap over
# samples, each sample's k scores resampled together: clustered by sample), `<name>_majority`
# (the metric of the majority-vote answers: per sample the answer most repeats gave, ties to the
# earliest, with the metric's own CI), and for 0/1 scores `<name>_pass@j` for every j = 1..k
# (Chen et al.'s unbiased estimator per sample, averaged; bootstrap CI over samples).


def _answer_key(answer: Any) -> str:
    import json

    return json.dumps(answer, sort_keys=True, ensure_ascii=False, default=str)


def majority_vote(runs: Sequence[Sequence[Prediction]]) -> list[Prediction]:
    """Per sample, the prediction whose answer most repeats gave (among answers that passed the
    schema); ties go to the earliest repeat; a sample without such an answer keeps repeat 0's."""
    out = []
    for column in zip(*runs, strict=True):
        valid = [p for p in column if p.status is Status.OK]
        if not valid:
            out.append(column[0])
            continue
        counts: dict[str, int] = {}
        for pred in valid:
            counts[_answer_key(pred.answer)] = counts.get(_answer_key(pred.answer), 0) + 1
        best = max(counts.values())
        winner = next(p for p in valid if counts[_answer_key(p.answer)] == best)
        out.append(winner)
    return out


def repeat_scores(
    task: Task,
    samples: Sequence[Sample],
    runs: Sequence[Sequence[Prediction]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> tuple[dict[str, MetricValue], list[Scores]]:
    """The repeat metrics (above) and each repeat's own scores. ``runs[r]`` holds repeat r's
    predictions, parsed and checked, in sample order."""
    k = len(runs)
    clusters, _ = _usable_clusters(task_clusters(task, samples))
    each = [score(task, samples, run, n_boot=0, seed=seed, progress=False) for run in runs]
    votes = majority_vote(runs)
    vote = score(task, samples, votes, n_boot=n_boot, seed=seed, progress=False)
    out: dict[str, MetricValue] = {}
    for name in each[0].values:
        columns = [s.per_sample.get(name) for s in each]
        matrix = None  # samples x repeats, where every repeat has per-sample scores
        if samples and all(c is not None for c in columns):
            matrix = np.column_stack(columns).astype(float)
        per_repeat = [s.values[name].value for s in each]
        boot = (n_boot, seed, clusters)
        counted = _counted(columns[0], len(samples))
        over = repeat_support(runs, counted, f"answers of the {k} repeats")
        added = {f"{name}_repeats_mean": _repeats_mean(per_repeat, matrix, len(samples), *boot)}
        if matrix is not None and np.isin(matrix, (0.0, 1.0)).all():
            added.update(_passes_at(name, matrix, *boot))
        for value in added.values():
            value.detail["support"] = over
        out.update(added)
        majority = vote.values[name]
        means = f"majority vote of {k} repeats (ties: the earliest); the metric's own CI"
        voted = repeat_support([votes], counted, f"majority-vote answers of the {k} repeats")
        detail = {**majority.detail, "means": means, "support": voted}
        out[f"{name}_majority"] = replace(majority, detail=detail)
    return out, each


def _counted(column: np.ndarray | None, n: int) -> np.ndarray:
    """The samples a metric output is over: those with a per-sample score (all without)."""
    return np.ones(n, dtype=bool) if column is None else ~np.isnan(column)


def repeat_support(
    runs: Sequence[Sequence[Prediction]], counted: np.ndarray, counts: str
) -> dict[str, Any]:
    """n/denominator of a value computed from the answers of ``runs`` (every repeat, or the
    majority vote) over the ``counted`` samples: ``n`` the ok answers among them, the
    ``denominator`` all of them, ``not_ok`` the others by status, ``counts`` what they are
    (the tables show these, not the first repeat's statuses)."""
    found = Counter(
        p.status for run in runs for p, c in zip(run, counted, strict=True) if c
    )
    return {
        "n": found[Status.OK],
        "denominator": sum(found.values()),
        "not_ok": {s.value: found[s] for s in Status if s is not Status.OK and found[s]},
        "counts": counts,
    }


def _sample_cis(
    columns: np.ndarray, n_boot: int, seed: int, clusters: np.ndarray | None = None
) -> tuple[list[tuple[float, float] | None], str | None]:
    """95% percentile-bootstrap CIs of the means of per-sample ``columns`` (samples x outputs),
    resampling samples, or whole clusters (the same resamples for every column); none without
    a bootstrap. A zero-width interval is widened (:func:`widen_zero_width`)."""
    n, m = columns.shape
    if n_boot <= 0 or n < 2:
        return [None] * m, None
    cis = bootstrap_totals_ci(
        columns,
        lambda s, w: w @ s,
        lambda t, size: t / size,
        n_boot=n_boot,
        seed=seed,
        clusters=clusters,
    )
    units = n if clusters is None else len(np.unique(clusters))
    means = columns.mean(axis=0)
    out = [widen_zero_width(float(v), ci, units) or ci for v, ci in zip(means, cis, strict=True)]
    if clusters is not None:
        return out, CLUSTER_METHOD
    return out, f"bootstrap({n_boot}) over samples"


def _repeats_mean(
    per_repeat: list[float | None],
    matrix: np.ndarray | None,
    n: int,
    n_boot: int,
    seed: int,
    clusters: np.ndarray | None = None,
) -> MetricValue:
    """mean@k: the metric's mean over the k repeats; its CI resamples samples with their k
    scores together (a sample's mean over its repeats is the resampled unit; a whole cluster
    of samples when the task has clusters)."""
    k = len(per_repeat)
    detail: dict[str, Any] = {"means": f"mean@{k}: mean over {k} repeats", "repeats": k}
    detail["per_repeat"] = per_repeat
    if matrix is None:
        values = [v for v in per_repeat if v is not None]
        mean = float(np.mean(values)) if values else float("nan")
        detail["sd_over_repeats"] = float(np.std(values, ddof=1)) if len(values) > 1 else None
        detail["ci"] = "none (no per-sample scores to cluster)"
        return MetricValue(mean, n, n, detail=detail)
    (interval,), method = _sample_cis(matrix.mean(axis=1, keepdims=True), n_boot, seed, clusters)
    if method and clusters is None:
        method = f"{method}, clustered by sample"
    value = MetricValue(float(matrix.mean()), n, n, interval, method, detail)
    value.clusters = _cluster_count(clusters) if interval is not None else None
    return value


def _cluster_count(clusters: np.ndarray | None) -> int | None:
    return None if clusters is None else len(np.unique(clusters))


def _passes_at(
    name: str, matrix: np.ndarray, n_boot: int, seed: int, clusters: np.ndarray | None = None
) -> dict[str, MetricValue]:
    """``<name>_pass@k`` for k = 1..n from 0/1 scores (samples x n repeats): per sample Chen et
    al.'s unbiased estimator with c = the repeats right, averaged over the samples."""
    samples, repeats = matrix.shape
    right = matrix.sum(axis=1).astype(int)
    columns = np.column_stack([pass_at_k(repeats, right, k) for k in range(1, repeats + 1)])
    cis, method = _sample_cis(columns, n_boot, seed, clusters)
    out = {}
    for k in range(1, repeats + 1):
        detail = {
            "means": f"pass@{k}: P(at least one of {k} answers drawn from the {repeats} "
            "repeats is right), unbiased estimator 1 - C(n-c, k)/C(n, k) per sample (n "
            "repeats, c of them right; Chen et al. 2021), averaged over the samples",
            "k": k,
            "repeats": repeats,
        }
        value = float(columns[:, k - 1].mean())
        ci = cis[k - 1]
        clustered = _cluster_count(clusters) if ci is not None else None
        out[f"{name}_pass@{k}"] = MetricValue(
            value, samples, samples, ci, method, detail, clustered
        )
    return out
