"""Data checks for a PromptCBLUE split (`mode=validate`; also logged as warnings on every load).

Per-sample findings for real problems (gold items off the documented shape, structured gold that
disagrees with the `target` text); samples without gold (empty targets, as in a test split) are
summed up in one finding, since a whole split may be like that.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import orjson

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.types import Dataset, LoadContext, Parser, Sample
from benchreg.core.validation import Finding, cached_findings
from benchreg.families.cblue import official
from benchreg.families.cblue.answer import off_schema_items
from benchreg.families.cblue.catalogue import TaskInfo, task_of_params
from benchreg.families.cblue.loader import TARGET_META
from benchreg.families.cblue.parser import NoAnswer

MAX_PER_KIND = 20


@registry.validators.register("cblue_gold")
def check_gold(dataset: Dataset, ctx: LoadContext, **params: Any) -> list[Finding]:
    """Gold items in the documented shape, and structured gold agreeing with the `target` text
    (read by the task's parser, `ctx.parser`). The findings are a value of the loading door,
    beside the samples: the same files read with the same parser give the same findings."""
    info = task_of_params(ctx.params, where=f"task entry {ctx.task_name}")
    key = {
        "entry": ctx.task_name,
        "loader_params": dict(ctx.params),
        "view": ctx.view,
        "parser": ctx.parser_ref,
        "samples": len(dataset.samples),
    }
    if not ctx.parser_ref:
        return _gold_findings(dataset, ctx, info)
    find = partial(_gold_findings, dataset, ctx, info)
    return cached_findings(FINDINGS, dataset.files, key, find, cache=ctx.cache)


FINDINGS = "cblue.gold_findings"  # the loaded-data cache's name of check_gold's findings


def _gold_findings(dataset: Dataset, ctx: LoadContext, info: TaskInfo) -> list[Finding]:
    findings: list[Finding] = []
    no_gold: list[str] = []
    for sample in dataset.samples:
        if info.kind == "classification" and sample.gold == "":
            no_gold.append(sample.id)
        bad = off_schema_items(info.name, sample.gold)
        if bad:
            findings.append(Finding(sample.id, f"{bad} gold item(s) deviate from the item shape"))
        problem = _target_problem(info, sample, ctx.parser) if ctx.parser else None
        if problem:
            findings.append(Finding(sample.id, problem))
    if len(findings) > MAX_PER_KIND:
        rest = len(findings) - MAX_PER_KIND
        findings = [*findings[:MAX_PER_KIND], Finding(info.name, f"... and {rest} more findings")]
    if no_gold:
        shown = ", ".join(no_gold[:5]) + (", ..." if len(no_gold) > 5 else "")
        findings.append(
            Finding(info.name, f"{len(no_gold)} sample(s) have an empty gold label: {shown}")
        )
    return findings


def _target_problem(info: TaskInfo, sample: Sample, parser: Parser) -> str | None:
    target = str(sample.meta.get(TARGET_META, ""))
    if not target:
        return None
    try:
        parsed = parser(target, sample)
    except NoAnswer as exc:  # text that holds no answer: compare what the official code reads
        parsed = exc.official
    except ParseError as exc:
        return f"target cannot be parsed: {exc}"
    if info.kind == "extraction":
        agrees = _same_json(parsed, sample.gold) or (
            official.item_set(parsed) == official.item_set(sample.gold)
        )
    else:
        agrees = parsed == sample.gold
    return None if agrees else "structured gold differs from the parsed `target` text"


_NOT_JSON = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _same_json(a: Any, b: Any) -> bool:
    """A quick sufficient test that two answers have the same item sets: the same JSON text (one
    C call each; in a consistent split the parsed target is the structured gold, item for item).
    Equal texts mean the same items with the same keys and values, hence equal item keys; the
    only values whose texts orjson merges are NaN, infinities and None (all `null`), so a text
    holding `null` is left to the item sets, as is anything orjson cannot write."""
    try:
        text = orjson.dumps(a, option=_NOT_JSON)
        return b"null" not in text and text == orjson.dumps(b, option=_NOT_JSON)
    except TypeError:  # orjson.JSONEncodeError
        return False
