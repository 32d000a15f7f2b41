"""Reading a condition -> outcome CSV into source tables of experiments (builder, step 1).

Rows sharing the `reaction_id` values form one source table. A row without a readable yield is
skipped (counted); a row whose conditions repeat an earlier row of its table is a duplicate (the
first one is kept, counted). Reactants and products must be the same within a table.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError, at
from benchreg.families.reaction_mc.build.config import BuildConfig, ConditionColumn, OutcomeColumn
from benchreg.families.reaction_mc.conditions import Signature, condition_signature
from benchreg.families.reaction_mc.effective import outcome_of


@dataclass(slots=True)
class Experiment:
    """One kept row: its conditions (condition columns only), outcome and provenance."""

    line: int  # CSV line number
    row_index: int  # position among the rows of its source table (0-based)
    conditions: dict[str, list[dict[str, str]]]
    scores: dict[str, Any]  # yield (float) and raw ee/er/dr/rr
    effective: float
    signature: Signature

    @property
    def yield_(self) -> float:
        return float(self.scores["yield"])


@dataclass(slots=True)
class SourceTable:
    table_id: str
    reaction_id: str
    doi: str | None
    reactants: list[dict[str, str]]
    products: list[dict[str, str]]
    experiments: list[Experiment]
    total_rows: int  # rows of the CSV in this table, kept or not


@dataclass(slots=True)
class TableRead:
    tables: list[SourceTable]
    skipped: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)  # a few skipped rows, for the report


def _text(cell: Any) -> str:
    return "" if cell is None else str(cell).strip()


def _number_text(text: str, decimals: int | None) -> str:
    if decimals is None:
        return text
    try:
        value = float(text)
    except ValueError:
        return text
    return f"{value:.{decimals}f}" if math.isfinite(value) else text


def condition_items(row: dict[str, str], spec: ConditionColumn) -> list[dict[str, str]]:
    names = _text(row.get(spec.column)) if spec.column else ""
    smiles = _text(row.get(spec.smiles)) if spec.smiles else ""
    name_parts = names.split(spec.split) if spec.split and names else [names]
    smiles_parts = smiles.split(spec.split) if spec.split and smiles else [smiles]
    if len(name_parts) != len(smiles_parts):
        if not names:
            name_parts = [""] * len(smiles_parts)
        elif not smiles:
            smiles_parts = [""] * len(name_parts)
    items = []
    for name, smi in zip(name_parts, smiles_parts, strict=False):
        name, smi = name.strip(), smi.strip()
        if not name and not smi:
            continue
        content = _number_text(name, spec.decimals) if name else smi
        if spec.unit and name:
            content = f"{content} {spec.unit}"
        items.append({"content": content, "SMILES": smi})
    return items


def _cell_value(text: str) -> Any:
    """A number when the cell is one, else the text (None when empty)."""
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else None


def _outcome(row: dict[str, str], spec: OutcomeColumn | None) -> Any:
    if spec is None:
        return None
    if spec.column:
        return _cell_value(_text(row.get(spec.column)))
    parts = [_text(row.get(c)) for c in spec.columns or []]
    if any(not p for p in parts):
        return None
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        return None
    if sum(numbers) <= 0:
        return None
    return ":".join(f"{n:g}" for n in numbers)


def _molecules(row: dict[str, str], specs: list[Any]) -> list[dict[str, str]]:
    out = []
    for spec in specs:
        smiles = spec.smiles_value if spec.smiles_value else _text(row.get(spec.smiles))
        name = spec.name_value or (_text(row.get(spec.name)) if spec.name else "")
        out.append({"content": name or "", "SMILES": smiles or ""})
    return out


def read_tables(config: BuildConfig, csv_path: Path) -> TableRead:
    try:
        handle = csv_path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise BenchregError("table file not found", where=csv_path) from None
    result = TableRead(tables=[])
    grouped: dict[tuple[str, ...], SourceTable] = {}
    seen: dict[tuple[str, ...], set[Signature]] = {}
    with handle:
        reader = csv.DictReader(handle)
        header = set(reader.fieldnames or [])
        missing = [c for c in config.columns() if c not in header]
        if missing:
            raise BenchregError(
                f"columns named in the config are not in the table: {missing}",
                where=csv_path,
                fix=f"the table has: {sorted(header)}",
            )
        for row in reader:
            line = reader.line_num
            if any(not _text(row.get(c)) for c in config.require):
                result.skipped["required_cell_empty"] += 1
                continue
            key = tuple(_text(row.get(c)) for c in config.reaction_id)
            table = grouped.get(key)
            reactants = _molecules(row, config.reactants)
            products = _molecules(row, config.products)
            if table is None:
                table = SourceTable(
                    table_id=f"{config.table_id_prefix}_table_{len(grouped)}",
                    reaction_id="|".join(key) or config.table_id_prefix,
                    doi=_text(row.get(config.doi_column)) if config.doi_column else config.doi,
                    reactants=reactants,
                    products=products,
                    experiments=[],
                    total_rows=0,
                )
                grouped[key] = table
                seen[key] = set()
            elif (reactants, products) != (table.reactants, table.products):
                raise BenchregError(
                    f"reactants/products differ within reaction id {table.reaction_id!r}",
                    where=at(csv_path, line),
                    fix="add the varying molecule's column to `reaction_id`",
                )
            table.total_rows += 1
            _add_row(config, row, line, table, seen[key], result)
    result.tables = list(grouped.values())
    return result


def _add_row(
    config: BuildConfig,
    row: dict[str, str],
    line: int,
    table: SourceTable,
    seen: set[Signature],
    result: TableRead,
) -> None:
    conditions = {spec.key: condition_items(row, spec) for spec in config.conditions}
    raw_yield = _outcome(row, config.outcomes.yield_)
    scores: dict[str, Any] = {"yield": raw_yield}
    for name in ("ee", "dr", "er", "rr"):
        scores[name] = _outcome(row, getattr(config.outcomes, name))
    outcome = outcome_of(scores)
    if raw_yield is None or not outcome.readable:
        reason = "no yield" if raw_yield is None else "; ".join(outcome.errors)
        result.skipped["unreadable_outcome" if raw_yield is not None else "no_yield"] += 1
        if len(result.examples) < 20:
            result.examples.append(f"line {line}: {reason}")
        return
    scale = config.outcomes.yield_.scale
    yield_value = outcome.yield_ * scale if outcome.yield_ is not None else 0.0
    scores["yield"] = yield_value
    signature = condition_signature(conditions)
    if signature in seen:
        result.skipped["duplicate_conditions"] += 1
        return
    seen.add(signature)
    effective = outcome.effective * scale if outcome.effective is not None else 0.0
    table.experiments.append(
        Experiment(
            line=line,
            row_index=table.total_rows - 1,
            conditions=conditions,
            scores=scores,
            effective=effective,
            signature=signature,
        )
    )
