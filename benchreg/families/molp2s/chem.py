"""RDKit structure features used by the MolP2S generator and baseline.

Pure functions over SMILES or RDKit molecules; RDKit is imported lazily.

* Symmetry classes come from ``Chem.CanonicalRankAtoms(mol, breakTies=False)``: atoms with the
  same rank are topologically equivalent, so each carbon class is one 13C peak (its size is the
  degeneracy) and each class of H-bearing heavy atoms is one 1H environment (its integration is
  the number of H atoms on the class). Diastereotopic protons and accidental overlap are ignored.
* Atom indices refer to the heavy-atom molecule, i.e. the heavy atoms in SMILES order (explicit
  ``[H]`` atoms are folded into their neighbours first). Hydrogen indices, where needed, follow
  ``Chem.AddHs``: hydrogens come after the heavy atoms, in the order of the atoms bearing them.
* Functional groups are SMARTS matches; :data:`CHARACTERISTIC_BANDS` maps each group to its
  textbook IR/Raman wavenumber range (cm^-1, as tabulated in Silverstein/Pavia-style tables).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

Mol = Any  # rdkit.Chem.Mol; kept as Any so that this module does not import RDKit at import time
Intensity = Literal["strong", "medium", "weak"]

DUMMY_TOKEN = "[*]"


class InvalidSmilesError(ValueError):
    """A SMILES string RDKit cannot parse (or a masked SMILES without exactly one mask)."""


@cache
def _chem() -> Any:
    from rdkit import Chem

    return Chem


# --- parsing and masks --------------------------------------------------------------------------


def parse_smiles(smiles: str) -> Mol:
    """The RDKit molecule of ``smiles``; :class:`InvalidSmilesError` when it does not parse."""
    from rdkit import rdBase

    if not isinstance(smiles, str) or not smiles.strip():
        raise InvalidSmilesError(f"empty or non-string SMILES {smiles!r}")
    with rdBase.BlockLogs():
        mol = _chem().MolFromSmiles(smiles)
    if mol is None:
        raise InvalidSmilesError(f"RDKit cannot parse SMILES {smiles!r}")
    return mol


def is_valid_smiles(smiles: str) -> bool:
    try:
        parse_smiles(smiles)
    except InvalidSmilesError:
        return False
    return True


def canonical_smiles(smiles_or_mol: str | Mol) -> str:
    mol = parse_smiles(smiles_or_mol) if isinstance(smiles_or_mol, str) else smiles_or_mol
    return str(_chem().MolToSmiles(mol))


def with_dummy_atom(masked_smiles: str, token: str = DUMMY_TOKEN) -> str:
    """``masked_smiles`` with a textual mask token (e.g. ``<MASK>``) replaced by ``[*]``."""
    if token in ("*", DUMMY_TOKEN):
        return masked_smiles
    return masked_smiles.replace(token, DUMMY_TOKEN)


def masked_scaffold(masked_smiles: str, token: str = DUMMY_TOKEN) -> Mol:
    """The scaffold molecule of a masked SMILES; it must hold exactly one dummy atom."""
    mol = parse_smiles(with_dummy_atom(masked_smiles, token))
    dummies = [atom.GetIdx() for atom in mol.GetAtoms() if atom.GetAtomicNum() == 0]
    if len(dummies) != 1:
        raise InvalidSmilesError(
            f"masked SMILES {masked_smiles!r} has {len(dummies)} mask atoms, expected exactly 1"
        )
    if mol.GetAtomWithIdx(dummies[0]).GetDegree() != 1:
        raise InvalidSmilesError(f"the mask of {masked_smiles!r} must have one attachment bond")
    return mol


def is_valid_masked_smiles(masked_smiles: str, token: str = DUMMY_TOKEN) -> bool:
    try:
        masked_scaffold(masked_smiles, token)
    except InvalidSmilesError:
        return False
    return True


def complete_masked_smiles(masked_smiles: str, fragment: str, token: str = DUMMY_TOKEN) -> str:
    """Put ``fragment`` (a SMILES with one ``[*]`` at its attachment atom) into the mask.

    Returns the canonical SMILES of the completed, sanitized molecule.
    """
    chem = _chem()
    scaffold = chem.RWMol(masked_scaffold(masked_smiles, token))
    group = chem.RWMol(masked_scaffold(fragment))
    for mol in (scaffold, group):
        for atom in mol.GetAtoms():
            if atom.GetAtomicNum() == 0:
                atom.SetAtomMapNum(1)
    try:
        joined = chem.molzip(scaffold, group)
        chem.SanitizeMol(joined)
    except Exception as exc:  # RDKit raises several unrelated exception types here
        raise InvalidSmilesError(
            f"{fragment!r} does not fit the mask of {masked_smiles!r}: {exc}"
        ) from None
    return canonical_smiles(joined)


def heavy_atom_count(smiles_or_mol: str | Mol) -> int:
    """Atoms heavier than hydrogen (mask dummy atoms are not counted)."""
    return sum(1 for atom in _heavy(smiles_or_mol).GetAtoms() if atom.GetAtomicNum() > 1)


def _heavy(smiles_or_mol: str | Mol) -> Mol:
    """The molecule without explicit hydrogen atoms (their count moves onto the neighbours)."""
    mol = parse_smiles(smiles_or_mol) if isinstance(smiles_or_mol, str) else smiles_or_mol
    if any(atom.GetAtomicNum() == 1 for atom in mol.GetAtoms()):
        mol = _chem().RemoveHs(mol)
    return mol


# --- symmetry classes and NMR counts ------------------------------------------------------------


def symmetry_classes(smiles_or_mol: str | Mol) -> list[tuple[int, ...]]:
    """Topologically equivalent heavy atoms, as index tuples ordered by their first atom."""
    mol = _heavy(smiles_or_mol)
    ranks = list(_chem().CanonicalRankAtoms(mol, breakTies=False))
    groups: dict[int, list[int]] = {}
    for index, rank in enumerate(ranks):
        groups.setdefault(rank, []).append(index)
    return sorted((tuple(atoms) for atoms in groups.values()), key=lambda atoms: atoms[0])


@dataclass(frozen=True, slots=True)
class CarbonNmrCounts:
    """Expected 13C peaks: one per class of equivalent carbons."""

    classes: tuple[tuple[int, ...], ...]

    @property
    def peaks(self) -> int:
        return len(self.classes)

    @property
    def degeneracies(self) -> tuple[int, ...]:
        """Class sizes, largest first."""
        return tuple(sorted((len(c) for c in self.classes), reverse=True))

    @property
    def carbons(self) -> int:
        return sum(len(c) for c in self.classes)


def carbon_nmr_counts(smiles_or_mol: str | Mol) -> CarbonNmrCounts:
    mol = _heavy(smiles_or_mol)
    classes = [
        atoms for atoms in symmetry_classes(mol) if mol.GetAtomWithIdx(atoms[0]).GetAtomicNum() == 6
    ]
    return CarbonNmrCounts(tuple(classes))


@dataclass(frozen=True, slots=True)
class HydrogenEnvironment:
    """Equivalent heavy atoms carrying hydrogens: one 1H peak."""

    atoms: tuple[int, ...]  # heavy-atom indices
    element: str  # element of the heavy atoms (C, N, O, S, ...)
    hydrogens_per_atom: int

    @property
    def integration(self) -> int:
        return len(self.atoms) * self.hydrogens_per_atom


@dataclass(frozen=True, slots=True)
class ProtonNmrCounts:
    environments: tuple[HydrogenEnvironment, ...]

    @property
    def peaks(self) -> int:
        return len(self.environments)

    @property
    def integrations(self) -> tuple[int, ...]:
        """Integrations, largest first."""
        return tuple(sorted((env.integration for env in self.environments), reverse=True))

    @property
    def hydrogens(self) -> int:
        return sum(env.integration for env in self.environments)


def hydrogen_environments(smiles_or_mol: str | Mol) -> tuple[HydrogenEnvironment, ...]:
    """Symmetry classes of H-bearing heavy atoms (explicit ``[H]`` atoms are folded in first)."""
    mol = _heavy(smiles_or_mol)
    environments = []
    for atoms in symmetry_classes(mol):
        atom = mol.GetAtomWithIdx(atoms[0])
        n_h = int(atom.GetTotalNumHs())
        if n_h:
            environments.append(HydrogenEnvironment(atoms, atom.GetSymbol(), n_h))
    return tuple(environments)


def proton_nmr_counts(smiles_or_mol: str | Mol) -> ProtonNmrCounts:
    return ProtonNmrCounts(hydrogen_environments(smiles_or_mol))


def hydrogen_atom_parents(smiles_or_mol: str | Mol) -> list[tuple[int, int]]:
    """``(hydrogen index, heavy-atom index)`` pairs in ``Chem.AddHs`` numbering."""
    with_h = _chem().AddHs(_heavy(smiles_or_mol))
    return [
        (atom.GetIdx(), atom.GetNeighbors()[0].GetIdx())
        for atom in with_h.GetAtoms()
        if atom.GetAtomicNum() == 1 and atom.GetDegree() == 1
    ]


def element_counts(smiles_or_mol: str | Mol) -> Counter[str]:
    """Atoms per element, hydrogens included."""
    mol = _heavy(smiles_or_mol)
    counts: Counter[str] = Counter()
    for atom in mol.GetAtoms():
        counts[atom.GetSymbol()] += 1
        counts["H"] += int(atom.GetTotalNumHs())
    return counts


# --- functional groups and characteristic bands -------------------------------------------------

FUNCTIONAL_GROUPS: dict[str, str] = {
    "carboxylic_acid": "[CX3](=O)[OX2H1]",
    "ester": "[CX3](=O)[OX2H0][#6]",
    "amide": "[CX3](=O)[NX3]",
    "amide_nh": "[NX3;H1,H2][CX3]=O",
    "aldehyde": "[CX3H1](=O)[#6]",
    "ketone": "[#6][CX3](=O)[#6]",
    "hydroxyl": "[OX2H][#6;!$([CX3]=O)]",
    "amine_nh": "[NX3;H1,H2;!$(N[CX3]=O);!$(N[SX4])]",
    "nitrile": "[CX2]#[NX1]",
    "alkyne": "[CX2]#[CX2]",
    "terminal_alkyne": "[CX2H1]#[CX2]",
    "alkene": "[CX3;!a]=[CX3;!a]",
    "vinyl_ch": "[CX3;!a;!H0]=[CX3;!a]",
    "nitro": "[$([NX3](=O)=O),$([NX3+](=O)[O-])]",
    "ether": "[OX2]([#6;!$([CX3]=O)])[#6;!$([CX3]=O)]",
    "aromatic_ring": "a1aaaaa1",
    "aromatic_ch": "[cH]",
    "aliphatic_ch": "[CX4;!H0]",
    "fluoride": "[#6]F",
    "chloride": "[#6]Cl",
    "bromide": "[#6]Br",
    "thiol": "[SX2H]",
    "thioether": "[SX2]([#6])[#6]",
    "sulfone": "[SX4](=O)(=O)([#6])[#6]",
}


@cache
def _pattern(smarts: str) -> Any:
    pattern = _chem().MolFromSmarts(smarts)
    if pattern is None:  # pragma: no cover - the table above is fixed
        raise ValueError(f"bad SMARTS {smarts!r}")
    return pattern


def functional_groups(smiles_or_mol: str | Mol) -> dict[str, int]:
    """Matches per group of :data:`FUNCTIONAL_GROUPS` (absent groups are left out)."""
    mol = _heavy(smiles_or_mol)
    found = {}
    for name, smarts in FUNCTIONAL_GROUPS.items():
        n = len(mol.GetSubstructMatches(_pattern(smarts)))
        if name == "aromatic_ring":  # count rings, not ring traversals
            n = sum(1 for ring in mol.GetRingInfo().AtomRings() if _is_aromatic_ring(mol, ring))
        if n:
            found[name] = n
    return found


def _is_aromatic_ring(mol: Mol, ring: tuple[int, ...]) -> bool:
    return len(ring) == 6 and all(mol.GetAtomWithIdx(i).GetIsAromatic() for i in ring)


@dataclass(frozen=True, slots=True)
class CharacteristicBand:
    """A group frequency: where a group absorbs (IR) and scatters (Raman), in cm^-1."""

    name: str
    group: str
    low: float
    high: float
    infrared: Intensity
    raman: Intensity

    def contains(self, position: float, tolerance: float = 0.0) -> bool:
        return self.low - tolerance <= position <= self.high + tolerance


_band = CharacteristicBand

CHARACTERISTIC_BANDS: tuple[CharacteristicBand, ...] = (
    _band("O-H stretch (acid, broad)", "carboxylic_acid", 2500, 3300, "strong", "weak"),
    _band("C=O stretch (acid)", "carboxylic_acid", 1680, 1725, "strong", "medium"),
    _band("C=O stretch (ester)", "ester", 1715, 1755, "strong", "medium"),
    _band("C-O stretch (ester)", "ester", 1150, 1300, "strong", "weak"),
    _band("C=O stretch (amide I)", "amide", 1630, 1695, "strong", "medium"),
    _band("N-H stretch (amide)", "amide_nh", 3150, 3500, "medium", "weak"),
    _band("C=O stretch (aldehyde)", "aldehyde", 1685, 1740, "strong", "medium"),
    _band("C-H stretch (aldehyde)", "aldehyde", 2695, 2830, "medium", "weak"),
    _band("C=O stretch (ketone)", "ketone", 1670, 1725, "strong", "medium"),
    _band("O-H stretch (alcohol, phenol)", "hydroxyl", 3200, 3550, "strong", "weak"),
    _band("C-O stretch (alcohol, phenol)", "hydroxyl", 1000, 1260, "strong", "weak"),
    _band("N-H stretch (amine)", "amine_nh", 3300, 3500, "medium", "weak"),
    _band("C≡N stretch", "nitrile", 2210, 2260, "medium", "strong"),
    _band("C≡C stretch", "alkyne", 2100, 2260, "weak", "strong"),
    _band("≡C-H stretch", "terminal_alkyne", 3260, 3330, "strong", "weak"),
    _band("C=C stretch (alkene)", "alkene", 1620, 1680, "medium", "strong"),
    _band("=C-H stretch", "vinyl_ch", 3010, 3100, "medium", "medium"),
    _band("NO2 asymmetric stretch", "nitro", 1500, 1560, "strong", "medium"),
    _band("NO2 symmetric stretch", "nitro", 1330, 1390, "strong", "strong"),
    _band("C-O-C stretch (ether)", "ether", 1050, 1275, "strong", "weak"),
    _band("C=C stretch (aromatic ring)", "aromatic_ring", 1450, 1600, "medium", "strong"),
    _band("ring breathing (aromatic)", "aromatic_ring", 990, 1010, "weak", "strong"),
    _band("C-H stretch (aromatic)", "aromatic_ch", 3000, 3100, "weak", "medium"),
    _band("C-H stretch (aliphatic)", "aliphatic_ch", 2850, 2970, "medium", "strong"),
    _band("C-F stretch", "fluoride", 1000, 1400, "strong", "weak"),
    _band("C-Cl stretch", "chloride", 550, 850, "strong", "strong"),
    _band("C-Br stretch", "bromide", 500, 690, "strong", "strong"),
    _band("S-H stretch", "thiol", 2550, 2600, "weak", "strong"),
    _band("C-S stretch", "thioether", 600, 710, "weak", "strong"),
    _band("SO2 asymmetric stretch", "sulfone", 1300, 1350, "strong", "medium"),
    _band("SO2 symmetric stretch", "sulfone", 1120, 1160, "strong", "strong"),
)


def expected_bands(
    smiles_or_mol: str | Mol, technique: Literal["infrared", "raman"] = "infrared"
) -> tuple[CharacteristicBand, ...]:
    """Characteristic bands of the molecule's groups.

    Raman keeps only bands that are at least of medium Raman intensity; infrared keeps all.
    """
    groups = functional_groups(smiles_or_mol)
    bands = (band for band in CHARACTERISTIC_BANDS if band.group in groups)
    if technique == "raman":
        return tuple(band for band in bands if band.raman != "weak")
    return tuple(bands)
