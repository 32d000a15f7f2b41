"""Illustrative property values for generated MolP2S records.

NOT measured or quantum-chemical data. Every value here is a deterministic, additive
(group-contribution style) function of the structure, tuned only so that magnitudes and trends look
plausible:

* 13C / 1H shifts: benzene-ring substituent increments (ipso/ortho/meta/para) and Shoolery /
  Grant-Paul style alpha/beta increments for aliphatic atoms, textbook values rounded;
* dipole norm: quadrature sum of group moments (+ a push-pull term on aromatic rings);
* HOMO-LUMO gap: a chromophore base value lowered by conjugated substituents (QM9-like scale);
* UV-vis: three excitations derived from the gap; oscillator strengths from conjugation;
* IR / Raman band positions: a point inside each group's textbook range (chem.CHARACTERISTIC_BANDS),
  lower in the range when the group is conjugated.

Equivalent atoms (same RDKit symmetry class) always get the same shift, so peak counts,
degeneracies and integrations stay exactly those computed in
:mod:`benchreg.families.molp2s.chem`.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from benchreg.families.molp2s import chem

Mol = Any
HETEROATOMS = frozenset({"N", "O", "F", "Cl", "Br", "S"})

# Substituent increments on a benzene ring, by the kind of the substituent (see group_kind).
# 13C: (ipso, ortho, meta, para) added to 128.5 ppm; 1H: (ortho, meta, para) added to 7.26 ppm.
RING_13C: dict[str, tuple[float, float, float, float]] = {
    "alkyl": (9.3, 0.7, -0.1, -2.9),
    "CF3": (2.6, -3.1, 0.4, 3.4),
    "OH": (26.9, -12.7, 1.4, -7.3),
    "OR": (31.4, -14.4, 1.0, -7.7),
    "OCOR": (22.4, -7.1, -0.4, -3.2),
    "NR2": (18.2, -13.4, 0.8, -10.0),
    "NHCOR": (9.7, -8.1, 0.2, -4.4),
    "NO2": (19.6, -5.3, 0.9, 6.0),
    "F": (35.1, -14.3, 0.9, -4.5),
    "Cl": (6.4, 0.2, 1.0, -2.0),
    "Br": (-5.4, 3.3, 2.2, -1.0),
    "SR": (10.2, -1.9, 0.4, -3.6),
    "SO2R": (12.3, -1.4, 0.8, 5.1),
    "CN": (-16.0, 3.6, 0.6, 4.3),
    "alkynyl": (-6.1, 3.8, 0.4, -0.2),
    "vinyl": (9.5, -2.0, 0.2, -0.5),
    "CHO": (8.2, 1.2, 0.5, 5.8),
    "COR": (9.1, 0.1, 0.0, 4.2),
    "COOH": (2.1, 1.5, 0.0, 5.1),
    "COOR": (2.0, 1.2, -0.1, 4.3),
    "CONR2": (5.0, -1.2, 0.1, 3.4),
    "aryl": (13.0, -1.1, 0.5, -1.1),
}
RING_1H: dict[str, tuple[float, float, float]] = {
    "alkyl": (-0.14, -0.06, -0.17),
    "CF3": (0.32, 0.14, 0.20),
    "OH": (-0.56, -0.12, -0.45),
    "OR": (-0.48, -0.09, -0.44),
    "OCOR": (-0.25, 0.03, -0.13),
    "NR2": (-0.75, -0.25, -0.65),
    "NHCOR": (0.12, -0.07, -0.28),
    "NO2": (0.95, 0.26, 0.38),
    "F": (-0.26, 0.00, -0.20),
    "Cl": (0.03, -0.02, -0.09),
    "Br": (0.18, -0.08, -0.04),
    "SR": (-0.08, -0.10, -0.24),
    "SO2R": (0.60, 0.25, 0.33),
    "CN": (0.36, 0.18, 0.28),
    "alkynyl": (0.15, -0.02, -0.01),
    "vinyl": (0.06, -0.03, -0.10),
    "CHO": (0.56, 0.22, 0.29),
    "COR": (0.62, 0.14, 0.21),
    "COOH": (0.85, 0.18, 0.27),
    "COOR": (0.71, 0.11, 0.21),
    "CONR2": (0.61, 0.10, 0.17),
    "aryl": (0.37, 0.20, 0.10),
}
# Alpha increments on an sp3 carbon: 13C (on top of the Grant-Paul carbon terms) and 1H.
ALPHA_13C: dict[str, float] = {
    "OH": 48.0, "OR": 48.0, "OCOR": 47.0, "NR2": 28.0, "NHCOR": 24.0, "NO2": 63.0,
    "F": 70.0, "Cl": 31.0, "Br": 20.0, "SR": 20.0, "SO2R": 40.0, "aryl": -1.0, "vinyl": 3.0,
    "alkynyl": -13.0, "CN": -6.0, "CHO": 22.0, "COR": 15.0, "COOH": 5.0, "COOR": 8.0,
    "CONR2": 8.0, "CF3": 0.0, "alkyl": 0.0,
}
ALPHA_1H: dict[str, float] = {
    "OH": 2.40, "OR": 2.40, "OCOR": 2.90, "NR2": 1.40, "NHCOR": 2.00, "NO2": 3.40, "F": 3.40,
    "Cl": 2.15, "Br": 2.40, "SR": 1.20, "SO2R": 1.90, "aryl": 1.45, "vinyl": 0.80,
    "alkynyl": 0.90, "CN": 1.10, "CHO": 1.30, "COR": 1.20, "COOH": 1.15, "COOR": 1.10,
    "CONR2": 1.10, "CF3": 1.00, "alkyl": 0.00,
}
# Group dipole moments (D), combined in quadrature.
GROUP_DIPOLE: dict[str, float] = {
    "nitro": 4.0, "nitrile": 3.9, "sulfone": 4.4, "amide": 3.6, "aldehyde": 2.8, "ketone": 2.8,
    "ester": 1.8, "carboxylic_acid": 1.7, "hydroxyl": 1.6, "amine_nh": 1.3, "ether": 1.25,
    "fluoride": 1.5, "chloride": 1.6, "bromide": 1.5, "thiol": 1.4, "thioether": 1.5,
    "alkene": 0.35,
}
DONORS = frozenset({"NR2", "OH", "OR", "SR", "NHCOR"})
ACCEPTORS = frozenset({"NO2", "CN", "CHO", "COR", "COOH", "COOR", "CONR2", "SO2R", "CF3"})
# Gap change (eV) of an aromatic ring per conjugated substituent kind.
RING_GAP: dict[str, float] = {
    "NR2": -1.1, "OH": -0.6, "OR": -0.6, "OCOR": -0.2, "NHCOR": -0.5, "SR": -1.0, "F": -0.1,
    "Cl": -0.3, "Br": -0.4, "alkyl": -0.15, "NO2": -1.6, "CHO": -1.3, "COR": -1.1,
    "COOR": -0.9, "COOH": -0.9, "CONR2": -0.7, "CN": -0.7, "vinyl": -1.2, "alkynyl": -0.9,
    "CF3": -0.2, "SO2R": -0.3, "aryl": -1.0,
}
# Gap (eV) of a non-aromatic molecule: the lowest chromophore wins.
CHROMOPHORE_GAP: dict[str, float] = {
    "nitro": 6.0, "aldehyde": 6.3, "ketone": 6.4, "thioether": 7.0, "bromide": 7.0,
    "thiol": 7.3, "amide": 7.6, "alkene": 7.7, "carboxylic_acid": 8.0, "ester": 8.1,
    "alkyne": 8.7, "chloride": 8.7, "amine_nh": 8.9, "ether": 9.5, "hydroxyl": 9.3,
    "nitrile": 9.9, "fluoride": 10.5,
}
SATURATED_GAP = 11.5
HC_EV_NM = 1239.84


# --- substituent kinds --------------------------------------------------------------------------


def _is_carbonyl_carbon(atom: Any) -> bool:
    return atom.GetSymbol() == "C" and any(
        bond.GetBondTypeAsDouble() == 2.0 and bond.GetOtherAtom(atom).GetSymbol() == "O"
        for bond in atom.GetBonds()
    )


def group_kind(mol: Mol, anchor: int, start: int) -> str:
    """What the group that starts at atom ``start`` is, seen from its neighbour ``anchor``."""
    atom = mol.GetAtomWithIdx(start)
    symbol = atom.GetSymbol()
    others = [n for n in atom.GetNeighbors() if n.GetIdx() != anchor]
    if symbol in ("F", "Cl", "Br"):
        return symbol
    if atom.GetIsAromatic():
        return "aryl"
    if symbol == "N":
        if atom.GetFormalCharge() == 1 and sum(n.GetSymbol() == "O" for n in others) == 2:
            return "NO2"
        return "NHCOR" if any(_is_carbonyl_carbon(n) for n in others) else "NR2"
    if symbol == "O":
        if atom.GetTotalNumHs():
            return "OH"
        return "OCOR" if any(_is_carbonyl_carbon(n) for n in others) else "OR"
    if symbol == "S":
        oxygens = sum(1 for n in others if n.GetSymbol() == "O")
        return "SO2R" if oxygens >= 2 else "SR"
    if symbol != "C":
        return "alkyl"
    orders = {n.GetIdx(): mol.GetBondBetweenAtoms(start, n.GetIdx()).GetBondTypeAsDouble()
              for n in others}
    for n in others:
        if orders[n.GetIdx()] == 3.0:
            return "CN" if n.GetSymbol() == "N" else "alkynyl"
    if _is_carbonyl_carbon(atom):
        singles = [n for n in others if orders[n.GetIdx()] == 1.0]
        if any(n.GetSymbol() == "O" for n in singles):
            hydroxy = any(n.GetSymbol() == "O" and n.GetTotalNumHs() for n in singles)
            return "COOH" if hydroxy else "COOR"
        if any(n.GetSymbol() == "N" for n in singles):
            return "CONR2"
        return "CHO" if atom.GetTotalNumHs() else "COR"
    if sum(1 for n in others if n.GetSymbol() == "F") >= 2:
        return "CF3"
    if any(orders[n.GetIdx()] == 2.0 and n.GetSymbol() == "C" for n in others):
        return "vinyl"
    return "alkyl"


@dataclass(frozen=True, slots=True)
class _Context:
    mol: Mol
    distances: Any  # topological distance matrix
    rings: tuple[frozenset[int], ...]

    def shares_ring(self, a: int, b: int) -> bool:
        return any(a in ring and b in ring for ring in self.rings)

    def ring_substituents(self, idx: int) -> list[tuple[str, int]]:
        """(kind, ring distance) of substituents on the aromatic ring(s) of ``idx``."""
        found = []
        for ring in self.rings:
            if idx not in ring:
                continue
            for member in ring:
                for neighbour in self.mol.GetAtomWithIdx(member).GetNeighbors():
                    n = neighbour.GetIdx()
                    if self.shares_ring(member, n):
                        continue
                    distance = int(self.distances[idx][member])
                    if distance <= 3:
                        found.append((group_kind(self.mol, member, n), distance))
        return found

    def ring_heteroatoms(self, idx: int) -> list[tuple[str, int]]:
        found = []
        for ring in self.rings:
            if idx in ring:
                for member in ring:
                    symbol = self.mol.GetAtomWithIdx(member).GetSymbol()
                    if symbol != "C":
                        found.append((symbol, int(self.distances[idx][member])))
        return found


def _context(mol: Mol) -> _Context:
    from rdkit import Chem

    rings = tuple(
        frozenset(ring)
        for ring in mol.GetRingInfo().AtomRings()
        if all(mol.GetAtomWithIdx(i).GetIsAromatic() for i in ring)
    )
    return _Context(mol, Chem.GetDistanceMatrix(mol), rings)


def _count_at(ctx: _Context, idx: int, distance: int, symbols: frozenset[str]) -> int:
    return sum(
        1
        for other in ctx.mol.GetAtoms()
        if int(ctx.distances[idx][other.GetIdx()]) == distance and other.GetSymbol() in symbols
    )


def _saturated_heteroatoms_at(ctx: _Context, idx: int, distance: int) -> int:
    """Neutral, singly bonded heteroatoms (no C=O oxygen, nitrile N or nitro O) at a distance."""
    return sum(
        1
        for other in ctx.mol.GetAtoms()
        if int(ctx.distances[idx][other.GetIdx()]) == distance
        and other.GetSymbol() in HETEROATOMS
        and other.GetFormalCharge() == 0
        and all(bond.GetBondTypeAsDouble() == 1.0 for bond in other.GetBonds())
    )


def _in_small_ring(mol: Mol, idx: int) -> bool:
    return bool(mol.GetRingInfo().IsAtomInRingOfSize(idx, 3))


# --- 13C shifts ---------------------------------------------------------------------------------


def _carbon_shift(ctx: _Context, idx: int) -> float:
    mol = ctx.mol
    atom = mol.GetAtomWithIdx(idx)
    neighbours = list(atom.GetNeighbors())
    kinds = [group_kind(mol, idx, n.GetIdx()) for n in neighbours]
    conjugated = any(k in ("aryl", "vinyl", "alkynyl") for k in kinds)
    if atom.GetIsAromatic():
        shift = 128.5
        for symbol, distance in ctx.ring_heteroatoms(idx):
            shift += {
                "N": {1: 21.5, 2: -4.7, 3: 7.4},
                "O": {1: 14.3, 2: -18.8},
                "S": {1: -3.1, 2: -1.7},
            }.get(symbol, {}).get(distance, 0.0)
        if sum(1 for ring in ctx.rings if idx in ring) > 1:
            shift += 5.0
        for kind, distance in ctx.ring_substituents(idx):
            shift += RING_13C.get(kind, (0.0, 0.0, 0.0, 0.0))[distance]
        return shift
    if atom.GetHybridization().name == "SP":
        if any(n.GetSymbol() == "N" for n in neighbours):
            return 118.7 if conjugated else 117.8
        return 77.3 if atom.GetTotalNumHs() else (84.0 if conjugated else 80.0)
    if _is_carbonyl_carbon(atom):
        kind = group_kind(mol, -1, idx)
        aliphatic = {"COOH": 178.0, "COOR": 171.0, "CONR2": 172.5, "CHO": 200.5, "COR": 207.0}
        shift = aliphatic.get(kind, 170.0)
        if atom.GetTotalNumHs() and kind in ("COOH", "COOR"):
            shift = 161.0  # formic acid / formate
        elif atom.GetTotalNumHs() and kind == "CONR2":
            shift = 162.5  # formamide
        return shift - (5.0 if conjugated else 0.0)
    if atom.GetHybridization().name == "SP2":
        return 114.5 if atom.GetTotalNumHs() == 2 else (137.0 + (2.0 if conjugated else 0.0))
    if sum(1 for n in neighbours if n.GetSymbol() == "F") >= 3:
        return 124.3
    carbons = frozenset({"C"})
    shift = (
        -2.3
        + 9.1 * _count_at(ctx, idx, 1, carbons)
        + 9.4 * _count_at(ctx, idx, 2, carbons)
        - 2.5 * _count_at(ctx, idx, 3, carbons)
    )
    shift += sum(ALPHA_13C.get(kind, 0.0) for kind in kinds)
    shift += 9.0 * _saturated_heteroatoms_at(ctx, idx, 2)
    shift -= 2.5 * _saturated_heteroatoms_at(ctx, idx, 3)
    if _in_small_ring(mol, idx):
        shift -= 17.0
    return min(max(shift, 0.0), 220.0)


# --- 1H shifts ----------------------------------------------------------------------------------


def _proton_shift(ctx: _Context, idx: int) -> float:
    mol = ctx.mol
    atom = mol.GetAtomWithIdx(idx)
    neighbours = list(atom.GetNeighbors())
    kinds = [group_kind(mol, idx, n.GetIdx()) for n in neighbours]
    symbol = atom.GetSymbol()
    on_ring = "aryl" in kinds
    if symbol == "O":
        if any(_is_carbonyl_carbon(n) for n in neighbours):
            return 11.5
        return 5.2 if on_ring else 2.1
    if symbol == "N":
        if any(_is_carbonyl_carbon(n) for n in neighbours):
            if atom.GetTotalNumHs() == 2:
                return 6.0
            return 7.4 if on_ring else 5.8
        return 3.6 if on_ring else 1.3
    if symbol == "S":
        return 3.4 if on_ring else 1.5
    if atom.GetIsAromatic():
        shift = 7.26
        for element, distance in ctx.ring_heteroatoms(idx):
            shift += {
                "N": {1: 1.3, 3: 0.4},
                "O": {1: 0.16, 2: -0.9},
                "S": {1: 0.06, 2: -0.16},
            }.get(element, {}).get(distance, 0.0)
        if any(sum(1 for ring in ctx.rings if m in ring) > 1 for m in _ring_members(ctx, idx)):
            shift += 0.3
        for kind, distance in ctx.ring_substituents(idx):
            if distance:
                shift += RING_1H.get(kind, (0.0, 0.0, 0.0))[distance - 1]
        return shift
    hybridization = atom.GetHybridization().name
    if hybridization == "SP":
        return 3.05 if on_ring else 2.5
    if _is_carbonyl_carbon(atom):
        if any(n.GetSymbol() in ("O", "N") for n in neighbours if not _is_double_o(mol, idx, n)):
            return 8.1  # formate / formamide
        return 9.95 if on_ring else 9.75
    if hybridization == "SP2":
        base = 5.1 if atom.GetTotalNumHs() == 2 else 5.85
        return base + (0.6 if on_ring else 0.0)
    shift = {3: 0.9, 2: 1.3, 1: 1.5}.get(atom.GetTotalNumHs(), 1.5)
    shift += sum(ALPHA_1H.get(kind, 0.0) for kind in kinds)
    shift += 0.25 * _saturated_heteroatoms_at(ctx, idx, 2)
    if _in_small_ring(mol, idx):
        shift -= 1.0
    return min(max(shift, 0.0), 13.0)


def _is_double_o(mol: Mol, idx: int, neighbour: Any) -> bool:
    bond = mol.GetBondBetweenAtoms(idx, neighbour.GetIdx())
    return neighbour.GetSymbol() == "O" and bond.GetBondTypeAsDouble() == 2.0


def _ring_members(ctx: _Context, idx: int) -> set[int]:
    return {m for ring in ctx.rings if idx in ring for m in ring}


# --- shift tables -------------------------------------------------------------------------------


def _separate(values: list[float], step: float) -> list[float]:
    """Nudge accidental coincidences apart so that distinct classes stay distinct peaks."""
    seen: set[float] = set()
    out = []
    for value in values:
        while value in seen:
            value = round(value + step, 2)
        seen.add(value)
        out.append(value)
    return out


@cache
def carbon_shifts(smiles: str) -> tuple[tuple[tuple[int, ...], float], ...]:
    """(carbon class, illustrative 13C shift in ppm), one per class, in class order."""
    mol = chem.parse_smiles(smiles)
    ctx = _context(mol)
    classes = chem.carbon_nmr_counts(mol).classes
    values = _separate([round(_carbon_shift(ctx, atoms[0]), 1) for atoms in classes], 0.1)
    return tuple(zip(classes, values, strict=True))


@cache
def proton_shifts(smiles: str) -> tuple[tuple[chem.HydrogenEnvironment, float], ...]:
    """(hydrogen environment, illustrative 1H shift in ppm), one per environment."""
    mol = chem.parse_smiles(smiles)
    ctx = _context(mol)
    environments = chem.hydrogen_environments(mol)
    values = _separate([round(_proton_shift(ctx, env.atoms[0]), 2) for env in environments], 0.02)
    return tuple(zip(environments, values, strict=True))


# --- electronic properties ----------------------------------------------------------------------


def _aromatic_substituents(mol: Mol) -> list[str]:
    kinds = []
    for atom in mol.GetAtoms():
        if not atom.GetIsAromatic():
            continue
        for neighbour in atom.GetNeighbors():
            bond = mol.GetBondBetweenAtoms(atom.GetIdx(), neighbour.GetIdx())
            if not bond.GetIsAromatic() and not (neighbour.GetIsAromatic() and bond.IsInRing()):
                kinds.append(group_kind(mol, atom.GetIdx(), neighbour.GetIdx()))
    return kinds


def _push_pull(kinds: list[str]) -> bool:
    return any(k in DONORS for k in kinds) and any(k in ACCEPTORS for k in kinds)


@cache
def dipole_debye(smiles: str) -> float:
    mol = chem.parse_smiles(smiles)
    groups = chem.functional_groups(mol)
    squares = sum(n * GROUP_DIPOLE.get(name, 0.0) ** 2 for name, n in groups.items())
    squares += sum(
        {"n": 2.2**2, "o": 0.7**2, "s": 0.55**2}.get(a.GetSymbol().lower(), 0.0)
        for a in mol.GetAtoms()
        if a.GetIsAromatic() and a.GetSymbol() != "C"
    )
    kinds = _aromatic_substituents(mol)
    value = math.sqrt(squares)
    if _push_pull(kinds):
        value += 1.5
    if "alkyl" in kinds:
        value += 0.35
    return round(value, 2)


@cache
def gap_ev(smiles: str) -> float:
    mol = chem.parse_smiles(smiles)
    rings = [r for r in mol.GetRingInfo().AtomRings()
             if all(mol.GetAtomWithIdx(i).GetIsAromatic() for i in r)]
    if rings:
        gap = 6.8 - 1.6 * (len(rings) - 1)
        if any(len(r) == 5 for r in rings):
            gap -= 0.6
        if any(a.GetIsAromatic() and a.GetSymbol() == "N" for a in mol.GetAtoms()):
            gap -= 0.55
        kinds = _aromatic_substituents(mol)
        steps = sorted(RING_GAP.get(k, 0.0) for k in kinds)
        gap += sum(step * 0.6**i for i, step in enumerate(steps))
        if _push_pull(kinds):
            gap -= 0.3
    else:
        groups = chem.functional_groups(mol)
        gap = min([SATURATED_GAP, *(CHROMOPHORE_GAP[g] for g in groups if g in CHROMOPHORE_GAP)])
        if "alkene" in groups and any(g in groups for g in ("aldehyde", "ketone", "ester")):
            gap -= 0.8
    return round(max(gap, 2.8), 3)


@cache
def uv_excitations(smiles: str) -> tuple[tuple[float, float], ...]:
    """Three (wavelength nm, oscillator strength), longest wavelength first."""
    mol = chem.parse_smiles(smiles)
    gap = gap_ev(smiles)
    aromatic = any(a.GetIsAromatic() for a in mol.GetAtoms())
    kinds = _aromatic_substituents(mol)
    conjugation = sum(1 for k in kinds if k in DONORS or k in ACCEPTORS or k == "vinyl")
    if aromatic:
        strengths = (
            min(0.02 + 0.12 * conjugation + (0.25 if _push_pull(kinds) else 0.0), 0.6),
            min(0.25 + 0.10 * conjugation, 0.9),
            0.7,
        )
    else:
        groups = chem.functional_groups(mol)
        n_pi = any(g in groups for g in ("aldehyde", "ketone", "nitro", "ester", "amide"))
        strengths = (0.008 if n_pi else 0.03, 0.12, 0.2)
    first = 0.7 * gap + 0.3
    energies = (first, first + 0.9, first + 1.7)
    return tuple(
        (round(HC_EV_NM / energy, 1), round(strength, 3))
        for energy, strength in zip(energies, strengths, strict=True)
    )


# --- vibrational bands --------------------------------------------------------------------------


def _band_fraction(mol: Mol, band: chem.CharacteristicBand, smiles: str) -> float:
    """Where in the band's range the illustrative position falls (0 = low end)."""
    conjugated = any(a.GetIsAromatic() for a in mol.GetAtoms()) or "alkene" in (
        chem.functional_groups(mol)
    )
    base = 0.3 if conjugated else 0.65
    jitter = (zlib.crc32(f"{smiles}|{band.name}".encode()) % 1000) / 1000.0 * 0.2 - 0.1
    return min(max(base + jitter, 0.05), 0.95)


@cache
def vibrational_bands(
    smiles: str, technique: Literal["infrared", "raman"]
) -> tuple[tuple[float, str], ...]:
    """(position cm^-1, intensity) per characteristic band, highest wavenumber first."""
    mol = chem.parse_smiles(smiles)
    bands = []
    for band in chem.expected_bands(mol, technique):
        position = band.low + (band.high - band.low) * _band_fraction(mol, band, smiles)
        intensity = band.infrared if technique == "infrared" else band.raman
        bands.append((float(round(position)), intensity))
    return tuple(sorted(bands, key=lambda b: -b[0]))
