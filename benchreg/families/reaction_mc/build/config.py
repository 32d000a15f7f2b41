"""The builder's YAML config: which CSV columns hold what, and the question-building settings.

Example (all keys documented in docs/reaction_mc.md):

```yaml
table: screen.csv                 # relative to this config file
reaction_id: [substrate]          # rows sharing these values form one source table ([]: one)
require: [substrate_smiles]       # rows with an empty cell in these columns are skipped
table_id_prefix: demo             # table ids: <prefix>_table_<k>, k by first appearance
doi: 10_0000_demo                 # or doi_column: <column>
reactants:
  - {smiles: substrate_smiles, name: substrate}
  - {smiles_value: "OB(O)c1ccccc1", name_value: phenylboronic acid}
products:
  - {smiles: product_smiles}
conditions:
  - {key: ligand, column: ligand, smiles: ligand_smiles}
  - {key: reaction_temperature, column: temp_c, unit: "°C"}
constant_conditions:
  solvents: [{content: DMSO, SMILES: "CS(C)=O"}]
outcomes:
  yield: {column: yield}
  ee: {column: ee}
  rr: {columns: [c2_area, c5_area]}   # two columns -> the ratio "a:b"
questions: {all_varying_max_options: 10}
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchreg.core.errors import BenchregError
from benchreg.core.io import read_yaml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MoleculeColumns(_Strict):
    """A reactant/product: SMILES and name from columns, or constant values."""

    smiles: str | None = None
    name: str | None = None
    smiles_value: str | None = None
    name_value: str | None = None

    @model_validator(mode="after")
    def _has_smiles(self) -> MoleculeColumns:
        if not (self.smiles or self.smiles_value):
            raise ValueError("a molecule needs `smiles` (a column) or `smiles_value`")
        return self


class ConditionColumn(_Strict):
    """One condition key: its text from `column`, its SMILES from `smiles` (either may be absent).

    `unit` is appended to numeric text ("105" -> "105 °C"); `decimals` rounds numeric text;
    `split` cuts a cell into several items (e.g. " | ").
    """

    key: str
    column: str | None = None
    smiles: str | None = None
    unit: str | None = None
    decimals: int | None = None
    split: str | None = None

    @model_validator(mode="after")
    def _has_source(self) -> ConditionColumn:
        if not (self.column or self.smiles):
            raise ValueError(f"condition {self.key!r} needs `column` or `smiles`")
        return self


class OutcomeColumn(_Strict):
    """An outcome from one column, or a ratio "a:b" built from several columns (er/dr/rr)."""

    column: str | None = None
    columns: list[str] | None = None
    scale: float = 1.0  # yield only: multiply (e.g. 100 for fractions)

    @model_validator(mode="after")
    def _one_source(self) -> OutcomeColumn:
        if bool(self.column) == bool(self.columns):
            raise ValueError("give exactly one of `column` or `columns`")
        if self.columns is not None and len(self.columns) < 2:
            raise ValueError("`columns` needs at least two columns (a ratio)")
        return self


class Outcomes(_Strict):
    yield_: OutcomeColumn = Field(alias="yield")
    ee: OutcomeColumn | None = None
    er: OutcomeColumn | None = None
    dr: OutcomeColumn | None = None
    rr: OutcomeColumn | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class QuestionSettings(_Strict):
    """Spec section 10 defaults, plus limits for large (HTE) tables."""

    single_varying_min_options: int = Field(2, ge=2)
    single_varying_max_options: int | None = Field(None, ge=2)
    all_varying_min_options: int = Field(2, ge=2)
    all_varying_max_options: int | None = Field(10, ge=2)
    all_varying_questions_per_table: int = Field(1, ge=1)
    min_reference: int = Field(2, ge=1)
    max_reference: int = Field(5, ge=1)
    min_remaining_all_varying: int = Field(5, ge=2)
    reference_low_mid_fraction: float = Field(2 / 3, gt=0, le=1)
    skip_all_zero: bool = True  # a question whose options all score 0 tells nothing

    @model_validator(mode="after")
    def _ordered(self) -> QuestionSettings:
        if self.min_reference > self.max_reference:
            raise ValueError("min_reference is above max_reference")
        return self


class BuildConfig(_Strict):
    table: str
    reaction_id: list[str] = Field(default_factory=list)  # [] -> the whole CSV is one table
    table_id_prefix: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    doi: str | None = None
    doi_column: str | None = None
    source_file: str | None = None
    reactants: list[MoleculeColumns] = Field(min_length=1)
    products: list[MoleculeColumns] = Field(min_length=1)
    conditions: list[ConditionColumn] = Field(min_length=1)
    constant_conditions: dict[str, Any] = Field(default_factory=dict)
    outcomes: Outcomes
    require: list[str] = Field(default_factory=list)  # rows with an empty cell here are skipped
    questions: QuestionSettings = Field(default_factory=QuestionSettings)

    @model_validator(mode="before")
    @classmethod
    def _id_as_list(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("reaction_id"), str):
            return {**value, "reaction_id": [value["reaction_id"]]}
        return value

    @model_validator(mode="after")
    def _constants_as_items(self) -> BuildConfig:
        """A plain value ("16 h", 60) becomes the V6 item list [{content, SMILES: ""}]."""
        for key, value in list(self.constant_conditions.items()):
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                self.constant_conditions[key] = [{"content": str(value), "SMILES": ""}]
            elif not isinstance(value, list) or not all(
                isinstance(item, dict) and "content" in item for item in value
            ):
                raise ValueError(
                    f"constant_conditions.{key}: give a text or a list of {{content, SMILES}}"
                )
            else:
                self.constant_conditions[key] = [
                    {"content": str(item["content"]), "SMILES": str(item.get("SMILES") or "")}
                    for item in value
                ]
        return self

    @model_validator(mode="after")
    def _keys_unique(self) -> BuildConfig:
        keys = [c.key for c in self.conditions]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"condition keys repeat: {repeated}")
        clash = sorted(set(keys) & set(self.constant_conditions))
        if clash:
            raise ValueError(f"keys {clash} are both table columns and constant_conditions")
        return self

    def columns(self) -> list[str]:
        """Every CSV column the config names."""
        names = [*self.reaction_id, *self.require]
        if self.doi_column:
            names.append(self.doi_column)
        for mol in (*self.reactants, *self.products):
            names += [c for c in (mol.smiles, mol.name) if c]
        for cond in self.conditions:
            names += [c for c in (cond.column, cond.smiles) if c]
        for field in ("yield_", "ee", "er", "dr", "rr"):
            outcome = getattr(self.outcomes, field)
            if outcome is not None:
                names += [outcome.column] if outcome.column else list(outcome.columns or [])
        return list(dict.fromkeys(names))


def load_config(path: Path) -> tuple[BuildConfig, Path]:
    """The validated config and the CSV path it names (resolved against the config's folder)."""
    data = read_yaml(path) or {}
    try:
        config = BuildConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        raise BenchregError(
            f"{loc + ': ' if loc else ''}{message}",
            where=path,
            fix="see docs/reaction_mc.md (builder config)",
        ) from None
    table = Path(config.table)
    if not table.is_absolute():
        table = (path.parent / table).resolve()
    return config, table
