"""The builder: spec rules asserted on its output, read back against the raw CSV rows.

Every option and reference carries its CSV line (`entry_idx`), so the checks here look the rows
up in the table itself (csv module, raw cells) and recompute effective scores independently.
Real HTE tables are read in place from ../shared (never copied).
"""

from __future__ import annotations

import csv
import json
import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchreg import load_task, run_task
from benchreg.core import registry
from benchreg.core.pipeline import data_root_for, load_dataset
from benchreg.families.reaction_mc.build import build, write_release
from benchreg.families.reaction_mc.build.__main__ import main
from benchreg.families.reaction_mc.records import ID_RE, QUESTION_TYPES, base_id

FAMILY = Path(__file__).resolve().parents[3] / "benchreg" / "families" / "reaction_mc"
DEMO = FAMILY / "sample_source" / "demo_config.yaml"
FRACTION = 2 / 3


@dataclass
class Table:
    """How to read a CSV independently: the raw column naming each condition key, outcomes."""

    conditions: dict[str, str]  # key -> column that identifies its value
    reaction_id: list[str]
    yield_col: str
    scale: float = 1.0
    ee: str | None = None
    dr: str | None = None
    rr: list[str] | None = None
    rows: dict[int, dict[str, str]] = field(default_factory=dict)


def _read(path: Path, table: Table) -> Table:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            table.rows[reader.line_num] = row
    return table


def _effective(table: Table, row: dict[str, str], effective_fn) -> float:
    def cell(col: str | None) -> Any:
        value = row.get(col) if col else None
        return value if value not in (None, "") else None

    y = max(0.0, float(row[table.yield_col])) * table.scale
    scores: dict[str, Any] = {"yield": y, "ee": cell(table.ee), "dr": cell(table.dr)}
    if table.rr and all(row[c] for c in table.rr):
        a, b = (float(row[c]) for c in table.rr)
        scores["rr"] = f"{a}:{b}" if a + b > 0 else None
    return effective_fn(scores)


def _key(table: Table, row: dict[str, str], keys: list[str]) -> tuple[str, ...]:
    return tuple(row[table.conditions[k]].strip() for k in keys)


def check_rules(out: Path, table: Table, effective_fn, max_single: int | None = None) -> int:
    """Assert the spec's rules on a built V6 folder; returns the number of checked questions."""
    files = {t: json.loads((out / f"multiple_choice_{t}.json").read_text()) for t in QUESTION_TYPES}
    by_id = {q["id"]: q for qs in files.values() for q in qs}
    eff = {line: _effective(table, row, effective_fn) for line, row in table.rows.items()}
    groups: dict[tuple[str, ...], list[int]] = defaultdict(list)  # reaction id -> lines
    for line, row in table.rows.items():
        groups[tuple(row[c] for c in table.reaction_id)].append(line)

    def lines(question: dict[str, Any]) -> list[int]:
        return [int(e["entry_idx"]) for e in question["meta"]["option_source_entries"]]

    def ref_lines(question: dict[str, Any]) -> list[int]:
        return [int(r["source_entry"]["entry_idx"])
                for r in question["input"]["reference_conditions"]]

    def table_lines(line: int) -> list[int]:
        row = table.rows[line]
        return groups[tuple(row[c] for c in table.reaction_id)]

    def low_mid(ref_line: int, frame: list[int]) -> bool:
        distinct: dict[tuple[str, ...], float] = {}
        for x in frame:  # the builder keeps the first of rows with identical conditions
            distinct.setdefault(_key(table, table.rows[x], list(table.conditions)), eff[x])
        below = sum(1 for v in distinct.values() if v < eff[ref_line] - 1e-9)
        return below < math.floor(FRACTION * len(distinct))

    for qtype, questions in files.items():
        for q in questions:
            match = ID_RE.match(q["id"])
            assert match, q["id"]
            opt_lines = lines(q)
            option_eff = [eff[x] for x in opt_lines]
            assert q["meta"]["yields"] == pytest.approx(
                [float(table.rows[x][table.yield_col]) * table.scale for x in opt_lines])
            best = max(option_eff)
            assert sorted(q["answer"]) == [i for i, v in enumerate(option_eff)
                                           if math.isclose(v, best, rel_tol=1e-9)]
            if qtype.startswith("single_varying"):
                target = q["target_key"]
                others = [k for k in q["varying_keys"] if k != target]
                fixed = {_key(table, table.rows[x], others) for x in opt_lines}
                assert len(fixed) == 1, q["id"]  # one real fixed group
                targets = [_key(table, table.rows[x], [target]) for x in opt_lines]
                assert len(set(targets)) == len(targets)
                coverage: dict[tuple[str, ...], set[tuple[str, ...]]] = defaultdict(set)
                for x in table_lines(opt_lines[0]):
                    coverage[_key(table, table.rows[x], others)].add(
                        _key(table, table.rows[x], [target]))
                most = max(len(v) for v in coverage.values())
                assert len(opt_lines) == (min(most, max_single) if max_single else most), q["id"]
            if qtype.endswith("_reference"):
                refs = ref_lines(q)
                assert 2 <= len(refs) <= 5
                option_keys = {_key(table, table.rows[x], list(table.conditions))
                               for x in opt_lines}
                for r in refs:
                    assert _key(table, table.rows[r], list(table.conditions)) not in option_keys
                    assert eff[r] <= best + 1e-9, q["id"]
                if qtype.startswith("all_varying"):
                    assert len(opt_lines) >= 5
                    base = by_id[base_id(q["id"])]
                    assert sorted(opt_lines + refs) == sorted(lines(base))
                    assert all(low_mid(r, lines(base)) for r in refs), q["id"]
                else:
                    assert all(low_mid(r, table_lines(r)) for r in refs), q["id"]
                control = by_id[q["id"] + "_control"]
                assert sorted(lines(control)) == sorted(opt_lines)
                assert "reference_conditions" not in control["input"]
            if qtype.endswith("_reference_control"):
                assert q["id"].removesuffix("_control") in by_id  # only with its reference
            if qtype == "single_varying_reference_control":
                assert q["options"] == by_id[base_id(q["id"])]["options"]
    return sum(len(qs) for qs in files.values())


def check_metrics_independently(out: Path, effective_fn, seed: int = 0) -> None:
    """Random predictions; the three metrics equal a direct computation from meta.scores."""
    rng = random.Random(seed)
    for qtype in QUESTION_TYPES:
        questions = json.loads((out / f"multiple_choice_{qtype}.json").read_text())
        if not questions:
            continue
        preds = {q["id"]: rng.randrange(len(q["options"])) for q in questions[1:]}
        path = out / f"pred_{qtype}.json"
        path.write_text(json.dumps(preds))
        result = run_task(load_task(f"reaction_mc/{qtype}"), view=None,
                          system_cfg={"name": "predictions", "path": str(path)},
                          roots={"reaction_mc": str(out)})
        rel = hit = ratio = 0.0
        for q in questions[1:]:  # the first question is missing: scores 0
            effs = [effective_fn(s) for s in q["meta"]["scores"]]
            yields = [s["yield"] for s in q["meta"]["scores"]]
            p = preds[q["id"]]
            rel += effs[p] / max(effs) if max(effs) > 0 else 1.0
            hit += math.isclose(effs[p], max(effs), rel_tol=1e-9)
            ratio += yields[p] / max(yields) if max(yields) > 0 else 1.0
        n = len(questions)
        assert result.metrics["avg_relative_score"].value == pytest.approx(rel / n)
        assert result.metrics["exact_match_accuracy"].value == pytest.approx(hit / n)
        assert result.metrics["avg_yield_ratio"].value == pytest.approx(ratio / n)
        assert result.statuses["missing"] == 1


def validator_findings(out: Path) -> list[str]:
    check = registry.validators.get("reaction_mc_consistency")
    found = []
    for qtype in QUESTION_TYPES:
        if not json.loads((out / f"multiple_choice_{qtype}.json").read_text()):
            continue
        spec = load_task(f"reaction_mc/{qtype}")
        dataset = load_dataset(spec, None, data_root_for(spec, {"reaction_mc": str(out)}))
        found += [str(f) for f in check(dataset, None)]
    return found


# --- the embedded demo table --------------------------------------------------------------------

DEMO_TABLE = Table(
    conditions={"catalysts": "catalyst", "ligand": "ligand", "reagents": "base",
                "solvents": "solvent", "reaction_temperature": "temp_c"},
    reaction_id=["reaction"], yield_col="yield", ee="ee", dr="dr", rr=["c2_area", "c5_area"],
)


def test_demo_build_follows_the_rules(tmp_path: Path, effective) -> None:
    questions, report = build(DEMO, seed=0)
    write_release(tmp_path, questions, report)
    table = _read(DEMO.parent / "demo_screen.csv", DEMO_TABLE)
    # the demo yields use "trace" and "<5%": read them like the spec, then the simple formula
    for row in table.rows.values():
        row["yield"] = {"trace": "0", "<5%": "5"}.get(row["yield"], row["yield"])
    assert check_rules(tmp_path, table, effective) == report["questions_total"] > 20
    assert validator_findings(tmp_path) == []
    assert report["reference_generated"] == sum(
        report["questions"][t] for t in ("single_varying_reference", "all_varying_reference"))


def test_seed_controls_the_output(tmp_path: Path) -> None:
    a, _ = build(DEMO, seed=0)
    b, _ = build(DEMO, seed=0)
    c, _ = build(DEMO, seed=7)
    assert a == b
    assert a != c


def test_cli_writes_v6_layout(tmp_path: Path, capsys) -> None:
    assert main(["--config", str(DEMO), "--out", str(tmp_path), "--seed", "3"]) == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert {f"multiple_choice_{t}.json" for t in QUESTION_TYPES} <= names
    assert {"prompt_single_varying.txt", "prompt_all_varying_reference.txt"} <= names
    assert "prompt_all_varying_reference_control.txt" not in names
    assert "wrote" in capsys.readouterr().out
    example = tmp_path / "example_prediction_multiple_choice_all_varying_reference.json"
    result = run_task(load_task("reaction_mc/all_varying_reference"), view=None,
                      system_cfg={"name": "predictions", "path": str(example)},
                      roots={"reaction_mc": str(tmp_path)})
    assert result.statuses["ok"] == len(result.samples)


def test_cli_bad_config_is_one_line(tmp_path: Path, capsys) -> None:
    config = yaml.safe_load(DEMO.read_text())
    config["conditions"].append({"key": "ligand", "column": "ligand"})
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    assert main(["--config", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "condition keys repeat: ['ligand']" in err


def test_cli_missing_column(tmp_path: Path, capsys) -> None:
    config = yaml.safe_load(DEMO.read_text())
    config["table"] = str(DEMO.parent / "demo_screen.csv")
    config["outcomes"]["ee"] = {"column": "ee_percent"}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    assert main(["--config", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "not in the table: ['ee_percent']" in capsys.readouterr().err


# --- real HTE tables (read in place) ------------------------------------------------------------

REAL = {
    "buchwald_hartwig": (
        ["rxnpredict_buchwald_hartwig", "data_table.csv"],
        """
reaction_id: [aryl_halide]
table_id_prefix: ahneman_bh
require: [aryl_halide_smiles, product_smiles]
reactants: [{smiles: aryl_halide_smiles, name: aryl_halide},
            {smiles_value: "Cc1ccc(N)cc1", name_value: p-toluidine}]
products: [{smiles: product_smiles}]
conditions:
  - {key: ligand, column: ligand, smiles: ligand_smiles}
  - {key: base, column: base, smiles: base_smiles}
  - {key: additive, column: additive, smiles: additive_smiles}
constant_conditions: {solvents: [{content: DMSO, SMILES: "CS(C)=O"}]}
outcomes: {yield: {column: yield}}
questions: {single_varying_max_options: 8, all_varying_questions_per_table: 2}
""",
        Table({"ligand": "ligand", "base": "base", "additive": "additive"}, ["aryl_halide"],
              "yield"),
        8,
    ),
    "suzuki_miyaura": (
        ["rxn_yields_suzuki_miyaura", "suzuki_miyaura_hte_with_smiles.csv"],
        """
reaction_id: [reactant_1, reactant_2]
table_id_prefix: perera_sm
reactants: [{smiles: reactant_1_smiles, name: reactant_1}, {smiles: reactant_2_smiles}]
products: [{smiles: product_smiles}]
conditions:
  - {key: ligand, column: ligand, smiles: ligand_smiles}
  - {key: reagents, column: base, smiles: base_smiles}
  - {key: solvents, column: solvent, smiles: solvent_smiles}
outcomes: {yield: {column: yield_pct_area_uv}}
questions: {all_varying_max_options: 8}
""",
        Table({"ligand": "ligand", "reagents": "base", "solvents": "solvent"},
              ["reactant_1", "reactant_2"], "yield_pct_area_uv"),
        None,
    ),
    "ch_arylation": (
        ["ochem_data", "CH-aryl-conditions", "rxns", "smiles.csv"],
        """
reaction_id: []
table_id_prefix: shields_charyl
reactants: [{smiles_value: "Cn1cnc(C#N)c1"}, {smiles_value: "Fc1ccccc1Br"}]
products: [{smiles_value: "N#CC1=C(C2=CC=CC=C2F)N(C)C=N1"}]
conditions:
  - {key: reagents, smiles: base_smiles}
  - {key: ligand, smiles: ligand_smiles}
  - {key: solvents, smiles: solvent_smiles}
  - {key: concentration, column: concentration, unit: M}
  - {key: reaction_temperature, column: temp_c, unit: "°C"}
outcomes: {yield: {column: yield}}
questions: {single_varying_max_options: 10, all_varying_questions_per_table: 4}
""",
        Table({"reagents": "base_smiles", "ligand": "ligand_smiles", "solvents": "solvent_smiles",
               "concentration": "concentration", "reaction_temperature": "temp_c"}, [], "yield"),
        10,
    ),
    "oxazole_regio_rr": (
        ["qai_ord_submission", "pd_oxazole_ch_arylation_regio",
         "oxazole_arylation_regio_tidy.csv"],
        """
reaction_id: []
table_id_prefix: pyparse_oxazole
reactants: [{smiles: aryl_bromide_smiles}, {smiles: oxazole_smiles}]
products: [{smiles: product_C2_aryl_smiles}]
conditions:
  - {key: catalysts, column: precatalyst, smiles: precatalyst_smiles}
  - {key: reagents, column: base, smiles: base_smiles}
outcomes:
  yield: {column: C2_product_corrP_STD}
  rr: {columns: [C2_product_corrP_STD, C5_product_corrP_STD]}
""",
        Table({"catalysts": "precatalyst", "reagents": "base"}, [], "C2_product_corrP_STD",
              rr=["C2_product_corrP_STD", "C5_product_corrP_STD"]),
        None,
    ),
    "barbas_ee": (
        ["ord_data_optimization", "barbas_oxindole_nitroolefin_ee_screen.csv"],
        """
reaction_id: []
table_id_prefix: barbas
doi_column: doi
reactants: [{smiles: oxindole_smiles}, {smiles: nitroolefin_smiles}]
products: [{smiles: product_smiles}]
conditions:
  - {key: catalysts, smiles: catalyst_smiles}
  - {key: solvents, column: solvent_name, smiles: solvent_smiles}
outcomes: {yield: {column: yield_pct}, ee: {column: ee_pct}}
""",
        Table({"catalysts": "catalyst_smiles", "solvents": "solvent_name"}, [], "yield_pct",
              ee="ee_pct"),
        None,
    ),
    "photoredox_ee": (
        ["qai_ord_submission", "photoredox_organocatalysis_ee", "ee_screen_with_smiles.csv"],
        """
reaction_id: [substrate_id]
table_id_prefix: photoredox_ee
reactants: [{smiles: substrate_smiles}, {smiles: aldehyde_smiles}]
products: [{smiles: product_smiles_no_stereo}]
conditions:
  - {key: catalysts, column: photocatalyst_name, smiles: photocatalyst_smiles}
  - {key: organocatalyst, column: organocatalyst_id, smiles: organocatalyst_smiles}
outcomes: {yield: {column: AR_product_to_IS}, ee: {column: ee_signed_pct}}
""",
        Table({"catalysts": "photocatalyst_name", "organocatalyst": "organocatalyst_id"},
              ["substrate_id"], "AR_product_to_IS", ee="ee_signed_pct"),
        None,
    ),
}


@pytest.mark.shared_data
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_hte_table(name: str, shared, tmp_path: Path, effective) -> None:
    parts, config_text, table_spec, max_single = REAL[name]
    csv_path = shared("data", "chem", *parts)
    config = tmp_path / f"{name}.yaml"
    config.write_text(f"table: {json.dumps(str(csv_path))}\n{config_text}", encoding="utf-8")
    out = tmp_path / "out"
    questions, report = build(config, seed=11)
    write_release(out, questions, report, with_prompts=False)
    assert report["questions"]["all_varying"] >= 1 and report["questions"]["single_varying"] >= 1
    table = _read(csv_path, table_spec)
    # skip rows the config skips (no aryl halide in the Buchwald-Hartwig controls)
    table.rows = {k: r for k, r in table.rows.items()
                  if all(r.get(c, "x") for c in ("aryl_halide_smiles", "product_smiles"))}
    assert check_rules(out, table, effective, max_single) == report["questions_total"]
    assert validator_findings(out) == []
    check_metrics_independently(out, effective)
