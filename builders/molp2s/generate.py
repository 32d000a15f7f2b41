"""A reproducible generator of MolP2S releases (seeded, pure Python + RDKit).

Layout written: ``<out>/data/<directory>/{correct,shuffled,counterfactual}.jsonl`` and the sibling
``.labels.jsonl`` files, for the 15 directories of the specification.

Records are built combinatorially from :mod:`building_blocks`: one scaffold with a masked
attachment point and 3-6 candidate groups of the same heavy-atom count; one candidate is the source
(the label). Views:

* correct: properties of the source completion;
* shuffled: same record, properties of another record's source molecule (a seeded derangement that
  never takes a molecule that is one of this record's candidates);
* counterfactual: properties of another candidate (the donor), label = donor index, record id
  ``<record_id>-cf<k>``; same masked SMILES, mask and candidate list as the correct record.

Peak counts, degeneracies, integrations and atom lists are computed from RDKit symmetry
(:mod:`benchreg.families.molp2s.chem`, runtime code shared with the baseline); every shift,
dipole, gap, band position and UV value is illustrative (:mod:`synthetic`), never measured or
quantum-chemical data.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from benchreg.families.molp2s import chem
from builders.molp2s import synthetic
from builders.molp2s.building_blocks import GROUPS_BY_SIZE, SCAFFOLDS, TEXT_MASK_TOKEN

PropertyRef = tuple[str, str | None]  # (property key, NMR representation or None)

_PROTON_INTEGRATION: PropertyRef = ("proton_nmr", "integration")
_CARBON_DEGENERACY: PropertyRef = ("carbon_nmr", "degeneracy")

DIRECTORY_PROPERTIES: dict[str, tuple[PropertyRef, ...]] = {
    "dipole": (("dipole", None),),
    "gap": (("gap", None),),
    "infrared": (("infrared", None),),
    "raman": (("raman", None),),
    "ultraviolet_visible": (("ultraviolet_visible", None),),
    "proton_nmr_peaks": (("proton_nmr", "peaks"),),
    "proton_nmr_integration": (_PROTON_INTEGRATION,),
    "proton_nmr_atom": (("proton_nmr", "atom"),),
    "carbon_nmr_peaks": (("carbon_nmr", "peaks"),),
    "carbon_nmr_degeneracy": (_CARBON_DEGENERACY,),
    "carbon_nmr_atom": (("carbon_nmr", "atom"),),
    "electronic": (("dipole", None), ("gap", None), ("ultraviolet_visible", None)),
    "magnetic_resonance": (_PROTON_INTEGRATION, _CARBON_DEGENERACY),
    "vibrational": (("infrared", None), ("raman", None)),
    "all_properties": (
        ("dipole", None),
        ("gap", None),
        ("infrared", None),
        ("raman", None),
        ("ultraviolet_visible", None),
        _PROTON_INTEGRATION,
        _CARBON_DEGENERACY,
    ),
}
DIRECTORIES: tuple[str, ...] = tuple(DIRECTORY_PROPERTIES)
VIEWS: tuple[str, ...] = ("correct", "shuffled", "counterfactual")

# Sizes of the reference release (specification 003).
REFERENCE_RECORDS = 136
_LARGER_COUNTERFACTUAL = {
    "gap", "proton_nmr_peaks", "proton_nmr_integration", "proton_nmr_atom", "carbon_nmr_peaks",
    "carbon_nmr_degeneracy", "carbon_nmr_atom", "magnetic_resonance",
}
REFERENCE_COUNTERFACTUAL: dict[str, int] = {
    d: 258 if d in _LARGER_COUNTERFACTUAL else 240 for d in DIRECTORIES
}
# Sizes of the embedded sample.
SAMPLE_RECORDS = 16
SAMPLE_COUNTERFACTUAL: dict[str, int] = {
    d: 20 if d in _LARGER_COUNTERFACTUAL else 18 for d in DIRECTORIES
}
TEXT_MASK_EVERY = 5  # every fifth record spells its mask as a text token


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """A scaffold, its candidate completions and the source candidate."""

    record_id: str
    masked_smiles: str
    token: str
    masked_heavy_atoms: int
    candidates: tuple[str, ...]
    label: int

    @property
    def source(self) -> str:
        return self.candidates[self.label]

    def task_line(self, properties: Mapping[str, Any], record_id: str | None = None) -> dict:
        return {
            "record_id": record_id or self.record_id,
            "masked_smiles": self.masked_smiles,
            "mask": {
                "token": self.token,
                "attachment_points": 1,
                "masked_heavy_atoms": self.masked_heavy_atoms,
            },
            "properties": dict(properties),
            "candidate_completed_smiles": list(self.candidates),
        }


# --- records ------------------------------------------------------------------------------------


def _masked_smiles(scaffold: str, token: str) -> str:
    canonical = chem.canonical_smiles(chem.masked_scaffold(scaffold))
    bracketed = re.sub(r"(?<!\[)\*(?!\])", chem.DUMMY_TOKEN, canonical)
    return bracketed.replace(chem.DUMMY_TOKEN, token)


def build_records(n_records: int, seed: int) -> list[SourceRecord]:
    """``n_records`` records with distinct source molecules and distinct candidate sets."""
    if n_records < 2:
        raise ValueError("a release needs at least 2 records (shuffling needs a partner)")
    rng = random.Random(seed)
    scaffolds = list(SCAFFOLDS)
    rng.shuffle(scaffolds)
    sizes = sorted(GROUPS_BY_SIZE)
    records: list[SourceRecord] = []
    sources: set[str] = set()
    candidate_sets: set[frozenset[str]] = set()
    for _attempt in range(100 * n_records):
        if len(records) == n_records:
            break
        scaffold = scaffolds[len(records) % len(scaffolds)]
        pool = GROUPS_BY_SIZE[rng.choice(sizes)]
        groups = rng.sample(pool, rng.randint(3, min(6, len(pool))))
        label = rng.randrange(len(groups))
        candidates = tuple(chem.complete_masked_smiles(scaffold, g) for g in groups)
        if (
            len(set(candidates)) < len(candidates)
            or candidates[label] in sources
            or frozenset(candidates) in candidate_sets
        ):
            continue
        sources.add(candidates[label])
        candidate_sets.add(frozenset(candidates))
        number = len(records) + 1
        token = TEXT_MASK_TOKEN if number % TEXT_MASK_EVERY == 0 else chem.DUMMY_TOKEN
        records.append(
            SourceRecord(
                record_id=f"mp2s-{number:04d}",
                masked_smiles=_masked_smiles(scaffold, token),
                token=token,
                masked_heavy_atoms=chem.heavy_atom_count(groups[label]),
                candidates=candidates,
                label=label,
            )
        )
    if len(records) < n_records:
        raise ValueError(
            f"could build only {len(records)} distinct records out of {n_records} requested; "
            "add scaffolds or groups to building_blocks.py"
        )
    return records


# --- property objects ---------------------------------------------------------------------------


@cache
def property_object(key: str, representation: str | None, smiles: str) -> dict[str, Any]:
    """One property of one molecule, in the release's JSON shape (do not mutate the result)."""
    if key == "dipole":
        return {"value": synthetic.dipole_debye(smiles), "unit": "D", "values": "illustrative"}
    if key == "gap":
        return {"value": synthetic.gap_ev(smiles), "unit": "eV", "values": "illustrative"}
    if key in ("infrared", "raman"):
        bands = synthetic.vibrational_bands(smiles, key)  # type: ignore[arg-type]
        return {
            "unit": "cm^-1",
            "bands": [{"position": p, "intensity": i} for p, i in bands],
            "values": "illustrative",
        }
    if key == "ultraviolet_visible":
        return {
            "unit": "nm",
            "excitations": [
                {"wavelength": w, "oscillator_strength": f}
                for w, f in synthetic.uv_excitations(smiles)
            ],
            "values": "illustrative",
        }
    if key == "proton_nmr":
        return _nmr_object("H", representation, smiles)
    if key == "carbon_nmr":
        return _nmr_object("C", representation, smiles)
    raise ValueError(f"unknown property {key!r}")


def _nmr_object(element: str, representation: str | None, smiles: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"unit": "ppm", "representation": representation}
    if element == "H":
        table = [
            (env.atoms, env.integration, shift) for env, shift in synthetic.proton_shifts(smiles)
        ]
        size_key = "integration"
    else:
        table = [(atoms, len(atoms), shift) for atoms, shift in synthetic.carbon_shifts(smiles)]
        size_key = "degeneracy"
    if representation == "atom":
        obj["atoms"] = _atom_rows(element, table, smiles)
    elif representation in ("peaks", "integration", "degeneracy"):
        rows = sorted(table, key=lambda row: -row[2])
        with_size = representation != "peaks"
        obj["peaks"] = [
            {"shift": shift, size_key: size} if with_size else {"shift": shift}
            for _atoms, size, shift in rows
        ]
    else:
        raise ValueError(f"unknown NMR representation {representation!r}")
    obj["values"] = "illustrative"
    obj["counts"] = "computed"
    return obj


def _atom_rows(
    element: str, table: list[tuple[tuple[int, ...], int, float]], smiles: str
) -> list[dict[str, Any]]:
    shift_of_heavy = {atom: shift for atoms, _size, shift in table for atom in atoms}
    if element == "H":
        pairs = chem.hydrogen_atom_parents(smiles)
        indexed = [(h, shift_of_heavy[parent]) for h, parent in pairs if parent in shift_of_heavy]
    else:
        indexed = sorted(shift_of_heavy.items())
    return [{"atom_index": i, "element": element, "shift": s} for i, s in indexed]


def directory_properties(directory: str, smiles: str) -> dict[str, Any]:
    return {
        key: property_object(key, representation, smiles)
        for key, representation in DIRECTORY_PROPERTIES[directory]
    }


# --- views --------------------------------------------------------------------------------------


def _shuffle_partners(
    records: list[SourceRecord], directory: str, rng: random.Random
) -> list[int]:
    """A derangement: record i shows the properties of record partners[i]'s source.

    The partner's source is never one of record i's candidates, and its properties differ from
    those of record i's own source (two molecules can share, e.g., a zero dipole).
    """
    n = len(records)
    own = [directory_properties(directory, r.source) for r in records]

    def acceptable(i: int, j: int) -> bool:
        return records[j].source not in records[i].candidates and own[j] != own[i]

    for _attempt in range(10_000):
        order = list(range(n))
        for i in range(n - 1, 0, -1):  # Sattolo: a single cycle, so no fixed point
            j = rng.randrange(i)
            order[i], order[j] = order[j], order[i]
        if all(acceptable(i, order[i]) for i in range(n)):
            return order
    raise ValueError(f"{directory}: no shuffle gives every record another molecule's properties")


def _counterfactual_picks(
    records: list[SourceRecord], directory: str, size: int, rng: random.Random
) -> list[tuple[int, int, int]]:
    """(record position, ordinal k, donor index) picks, round-robin over records."""
    queues = []
    for record in records:
        own = directory_properties(directory, record.source)
        donors = [i for i in range(len(record.candidates)) if i != record.label]
        rng.shuffle(donors)
        queues.append(
            [i for i in donors if directory_properties(directory, record.candidates[i]) != own]
        )
    available = sum(len(q) for q in queues)
    if size > available:
        raise ValueError(
            f"{directory}: {size} counterfactual records requested, only {available} donors exist; "
            "raise n_records or lower the counterfactual size"
        )
    picks: list[tuple[int, int, int]] = []
    depth = 0
    while len(picks) < size:
        for position, queue in enumerate(queues):
            if depth < len(queue) and len(picks) < size:
                picks.append((position, depth + 1, queue[depth]))
        depth += 1
    return sorted(picks)


def _view_lines(
    records: list[SourceRecord], directory: str, size: int, seed: int
) -> dict[str, list[tuple[dict, dict]]]:
    """(task line, label line) pairs per view."""
    correct = [
        (r.task_line(directory_properties(directory, r.source)), _label(r.record_id, r.label))
        for r in records
    ]
    partners = _shuffle_partners(
        records, directory, random.Random(f"{seed}:{directory}:shuffled")
    )
    shuffled = [
        (
            r.task_line(directory_properties(directory, records[partners[i]].source)),
            _label(r.record_id, r.label),
        )
        for i, r in enumerate(records)
    ]
    picks = _counterfactual_picks(
        records, directory, size, random.Random(f"{seed}:{directory}:counterfactual")
    )
    counterfactual = []
    for position, k, donor in picks:
        record = records[position]
        record_id = f"{record.record_id}-cf{k}"
        properties = directory_properties(directory, record.candidates[donor])
        counterfactual.append((record.task_line(properties, record_id), _label(record_id, donor)))
    return {"correct": correct, "shuffled": shuffled, "counterfactual": counterfactual}


def _label(record_id: str, label: int) -> dict[str, Any]:
    return {"record_id": record_id, "label": label}


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8", newline="\n")


def generate_release(
    out: Path, *, n_records: int, counterfactual_sizes: dict[str, int] | int, seed: int = 0
) -> dict[str, dict[str, int]]:
    """Write a MolP2S release under ``out``; returns the record count per directory and view."""
    if isinstance(counterfactual_sizes, int):
        sizes = dict.fromkeys(DIRECTORIES, counterfactual_sizes)
    else:
        missing = [d for d in DIRECTORIES if d not in counterfactual_sizes]
        if missing:
            raise ValueError(f"counterfactual_sizes lacks {', '.join(missing)}")
        sizes = dict(counterfactual_sizes)
    records = build_records(n_records, seed)
    counts: dict[str, dict[str, int]] = {}
    for directory in DIRECTORIES:
        folder = Path(out) / "data" / directory
        folder.mkdir(parents=True, exist_ok=True)
        views = _view_lines(records, directory, sizes[directory], seed)
        counts[directory] = {}
        for view, lines in views.items():
            _write_jsonl(folder / f"{view}.jsonl", [task for task, _ in lines])
            _write_jsonl(folder / f"{view}.labels.jsonl", [label for _, label in lines])
            counts[directory][view] = len(lines)
    return counts


def release_readme(
    *, seed: int, n_records: int, counts: Mapping[str, Mapping[str, int]], command: str
) -> str:
    """The README.md that documents a generated release (provenance and honesty notes)."""
    rows = "\n".join(
        f"| `{d}` | {', '.join(_describe(ref) for ref in DIRECTORY_PROPERTIES[d])} | "
        f"{counts[d]['correct']} | {counts[d]['shuffled']} | {counts[d]['counterfactual']} |"
        for d in DIRECTORIES
    )
    return f"""# MolP2S release generated by benchreg

This is NOT third-party data. Every file under `data/` was written by benchreg's own generator
(`builders/molp2s/generate.py`, seed {seed}, {n_records} records) from the hand-written scaffolds
and masked groups of `builders/molp2s/building_blocks.py`. Regenerate it, byte for byte (same
RDKit version), from the project root with:

    {command}

Layout: `data/<directory>/{{correct,shuffled,counterfactual}}.jsonl` with sibling `.labels.jsonl`
files (`{{"record_id", "label"}}`, 0-based index into `candidate_completed_smiles`).

| directory | properties | correct | shuffled | counterfactual |
|---|---|---|---|---|
{rows}

## Computed versus illustrative values

Each property object says which it is:

* `"counts": "computed"` (NMR objects): the number of peaks, the degeneracies, the integrations and
  the atom lists are exact consequences of the structure, computed with RDKit
  (`Chem.CanonicalRankAtoms(mol, breakTies=False)` symmetry classes; one 13C peak per class of
  equivalent carbons, one 1H peak per class of equivalent H-bearing atoms; diastereotopic protons
  and accidental overlap are ignored).
* `"values": "illustrative"` (every property): the chemical shifts, dipole norms, HOMO-LUMO gaps,
  IR/Raman band positions and intensities, and UV-vis wavelengths and oscillator strengths are
  plausible, deterministic group-contribution style functions of the structure
  (`builders/molp2s/synthetic.py`). They are NOT measured and NOT quantum-chemical values;
  use them to exercise the pipeline, not to draw chemical conclusions.

Bands lie inside the textbook range of their group (`CHARACTERISTIC_BANDS` in
`benchreg/families/molp2s/chem.py`); Raman lists only bands of at least medium Raman intensity.

## Records and views

* Each record: a scaffold with one masked attachment point, 3-6 candidate completions whose masked
  groups have the same heavy-atom count (`mask.masked_heavy_atoms`), one of them the source.
  `masked_smiles` holds the RDKit dummy atom `[*]`, except every {TEXT_MASK_EVERY}th record, which
  spells the mask as the text token `{TEXT_MASK_TOKEN}` (`mask.token` names it; replace it by `[*]`
  to parse).
* correct: properties of the source completion; shuffled: same record id, candidates and label,
  properties of another record's source molecule (seeded derangement, never one of the record's
  own candidates, never equal to the correct properties); counterfactual: properties of another
  candidate of the same record (the donor), label = donor index, record id `<record_id>-cf<k>`,
  same masked SMILES and candidate list (in the same order) as the correct record.

## Atom indices (atom-wise NMR)

`atom_index` numbers the atoms of the molecule the property belongs to, as written in its SMILES:
heavy atoms in SMILES order (`Chem.MolFromSmiles`), then hydrogens in `Chem.AddHs` order (after
the heavy atoms, grouped by the heavy atom that carries them, in that atom's order).
"""


def _describe(ref: PropertyRef) -> str:
    key, representation = ref
    return f"{key} ({representation})" if representation else key
