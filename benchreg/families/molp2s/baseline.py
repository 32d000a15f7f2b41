"""The default offline MolP2S system ``molp2s_rdkit``: transparent RDKit rules, no learning.

Each kind of evidence gives every candidate a penalty (0 = fully consistent); the penalties of all
evidence present are summed and the candidate with the lowest total wins:

* 13C (``carbon_nmr``): peaks -> |peak count - carbon symmetry classes|; degeneracy -> that plus
  |total carbons| difference plus half the symmetric difference of the degeneracy multisets;
  atom-wise -> |carbon atoms| difference, |distinct shifts - classes| and atom indices that are not
  carbons of the candidate.
* 1H (``proton_nmr``): the same with hydrogen environments, integrations and ``Chem.AddHs``
  hydrogen indices.
* IR / Raman bands: characteristic bands the candidate's groups should show but no observed band
  explains, plus observed bands outside every characteristic range of the candidate
  (:data:`chem.CHARACTERISTIC_BANDS`, tolerance :data:`BAND_TOLERANCE`).
* Dipole, gap and UV-vis carry no rule: alone (or with no properties, as in the structure-only
  view) the choice is structural.

Ties (and the structure-only case) go to the structurally simplest candidate: fewest heavy atoms,
then lowest molecular weight, then the first index. ``metadata["rule"]`` says what decided.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import SystemContext
from benchreg.core.types import Prediction, Sample
from benchreg.families.molp2s import chem

BAND_TOLERANCE = 10.0  # cm^-1
UNUSABLE = float("inf")
Penalty = Callable[["CandidateFeatures", Mapping[str, Any]], float]


@dataclass(frozen=True, slots=True)
class CandidateFeatures:
    """What the rules need to know about one candidate completion."""

    carbon: chem.CarbonNmrCounts
    proton: chem.ProtonNmrCounts
    elements_by_index: tuple[str, ...]  # Chem.AddHs numbering: heavy atoms, then hydrogens
    infrared: tuple[chem.CharacteristicBand, ...]
    raman: tuple[chem.CharacteristicBand, ...]
    heavy_atoms: int
    weight: float


@cache
def candidate_features(smiles: str) -> CandidateFeatures | None:
    """Features of a candidate SMILES, or None when it does not parse."""
    from rdkit.Chem import Descriptors

    try:
        mol = chem.parse_smiles(smiles)
    except chem.InvalidSmilesError:
        return None
    heavy = [atom.GetSymbol() for atom in mol.GetAtoms()]
    hydrogens = ["H"] * len(chem.hydrogen_atom_parents(mol))
    return CandidateFeatures(
        carbon=chem.carbon_nmr_counts(mol),
        proton=chem.proton_nmr_counts(mol),
        elements_by_index=tuple(heavy + hydrogens),
        infrared=chem.expected_bands(mol, "infrared"),
        raman=chem.expected_bands(mol, "raman"),
        heavy_atoms=chem.heavy_atom_count(mol),
        weight=round(float(Descriptors.MolWt(mol)), 3),
    )


# --- penalties ----------------------------------------------------------------------------------


def _multiset_gap(observed: Sequence[int], expected: Sequence[int]) -> float:
    a, b = Counter(observed), Counter(expected)
    return 0.5 * sum(((a - b) + (b - a)).values())


def _peak_sizes(peaks: Sequence[Mapping[str, Any]], key: str) -> list[int]:
    return [int(p[key]) for p in peaks if isinstance(p.get(key), int | float)]


def _atom_rows_penalty(
    rows: Sequence[Mapping[str, Any]], element: str, n_atoms: int, n_classes: int,
    elements_by_index: Sequence[str],
) -> float:
    indices = [r.get("atom_index") for r in rows]
    misplaced = sum(
        1
        for i in indices
        if not isinstance(i, int) or not 0 <= i < len(elements_by_index)
        or elements_by_index[i] != element
    )
    distinct_shifts = len({r.get("shift") for r in rows})
    return abs(len(rows) - n_atoms) + abs(distinct_shifts - n_classes) + misplaced


def carbon_penalty(features: CandidateFeatures, prop: Mapping[str, Any]) -> float:
    counts = features.carbon
    representation = prop.get("representation")
    if representation == "atom":
        return _atom_rows_penalty(
            prop.get("atoms") or [], "C", counts.carbons, counts.peaks, features.elements_by_index
        )
    peaks = prop.get("peaks") or []
    penalty = float(abs(len(peaks) - counts.peaks))
    if representation == "degeneracy":
        sizes = _peak_sizes(peaks, "degeneracy")
        penalty += abs(sum(sizes) - counts.carbons) + _multiset_gap(sizes, counts.degeneracies)
    return penalty


def proton_penalty(features: CandidateFeatures, prop: Mapping[str, Any]) -> float:
    counts = features.proton
    representation = prop.get("representation")
    if representation == "atom":
        return _atom_rows_penalty(
            prop.get("atoms") or [], "H", counts.hydrogens, counts.peaks,
            features.elements_by_index,
        )
    peaks = prop.get("peaks") or []
    penalty = float(abs(len(peaks) - counts.peaks))
    if representation == "integration":
        sizes = _peak_sizes(peaks, "integration")
        penalty += abs(sum(sizes) - counts.hydrogens) + _multiset_gap(sizes, counts.integrations)
    return penalty


def _band_penalty(expected: Sequence[chem.CharacteristicBand], prop: Mapping[str, Any]) -> float:
    positions = [
        float(b["position"]) for b in prop.get("bands") or []
        if isinstance(b.get("position"), int | float)
    ]
    missing = sum(
        1 for band in expected
        if not any(band.contains(p, BAND_TOLERANCE) for p in positions)
    )
    unexplained = sum(
        1 for p in positions
        if not any(band.contains(p, BAND_TOLERANCE) for band in expected)
    )
    return float(missing + unexplained)


def infrared_penalty(features: CandidateFeatures, prop: Mapping[str, Any]) -> float:
    return _band_penalty(features.infrared, prop)


def raman_penalty(features: CandidateFeatures, prop: Mapping[str, Any]) -> float:
    return _band_penalty(features.raman, prop)


RULES: dict[str, Penalty] = {
    "carbon_nmr": carbon_penalty,
    "proton_nmr": proton_penalty,
    "infrared": infrared_penalty,
    "raman": raman_penalty,
}


# --- choice -------------------------------------------------------------------------------------


def _simplest(indices: Sequence[int], features: Sequence[CandidateFeatures | None]) -> int:
    def key(i: int) -> tuple[float, float, int]:
        f = features[i]
        return (UNUSABLE, UNUSABLE, i) if f is None else (f.heavy_atoms, f.weight, i)

    return min(indices, key=key)


def _rule_name(key: str, prop: Mapping[str, Any]) -> str:
    representation = prop.get("representation")
    return f"{key}_{representation}" if representation else f"{key}_bands"


def choose_candidate(task: Mapping[str, Any]) -> tuple[int, str]:
    """The chosen candidate index for one task line (or Sample.input) and the deciding rule."""
    candidates = list(task.get("candidate_completed_smiles") or [])
    if not candidates:
        return 0, "no_candidates"
    features = [candidate_features(s) if isinstance(s, str) else None for s in candidates]
    properties = task.get("properties") or {}
    totals = [0.0 if f is not None else UNUSABLE for f in features]
    used = []
    for key, penalty in RULES.items():
        prop = properties.get(key)
        if not isinstance(prop, Mapping):
            continue
        try:
            scores = [penalty(f, prop) if f is not None else UNUSABLE for f in features]
        except (TypeError, ValueError, AttributeError):  # malformed property: ignore it
            continue
        totals = [t + s for t, s in zip(totals, scores, strict=True)]
        used.append(_rule_name(key, prop))
    best = min(totals)
    tied = [i for i, t in enumerate(totals) if t == best]
    if not used:
        return _simplest(range(len(candidates)), features), "structure_only"
    rule = "+".join(used)
    if len(tied) > 1:
        return _simplest(tied, features), f"{rule}+structure_tiebreak"
    return tied[0], rule


@registry.baselines.register("molp2s_rdkit")
def make(ctx: SystemContext, **params: Any) -> Callable[[Sample], Prediction]:
    """Factory of the RDKit rule baseline; it takes no parameters."""
    if params:
        raise BenchregError(
            f"baseline molp2s_rdkit takes no parameters, got {', '.join(sorted(params))}",
            where=ctx.task.name,
            fix="remove the baseline params from the task entry or the model.params override",
        )

    def answer(sample: Sample) -> Prediction:
        index, rule = choose_candidate(sample.input)
        return Prediction(sample_id=sample.id, answer=index, raw_text=None, metadata={"rule": rule})

    return answer
