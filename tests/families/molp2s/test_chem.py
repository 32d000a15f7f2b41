"""RDKit structure features: symmetry classes, H environments, groups, bands, masks."""

from __future__ import annotations

import pytest
from rdkit import Chem

from benchreg.families.molp2s import chem


@pytest.mark.parametrize(
    ("smiles", "peaks", "degeneracies"),
    [
        ("Cc1ccccc1", 5, (2, 2, 1, 1, 1)),  # toluene
        ("Cc1ccc(C)cc1", 3, (4, 2, 2)),  # p-xylene
        ("c1ccccc1", 1, (6,)),
        ("CC(C)(C)C", 2, (4, 1)),  # neopentane
        ("c1ccc2ccccc2c1", 3, (4, 4, 2)),  # naphthalene
        ("OCC", 2, (1, 1)),
        ("O", 0, ()),
    ],
)
def test_carbon_peaks_and_degeneracies(smiles: str, peaks: int, degeneracies: tuple) -> None:
    counts = chem.carbon_nmr_counts(smiles)
    assert counts.peaks == peaks
    assert counts.degeneracies == degeneracies
    assert counts.carbons == sum(degeneracies)


@pytest.mark.parametrize(
    ("smiles", "integrations"),
    [
        ("CCO", (3, 2, 1)),  # ethanol 3:2:1
        ("Cc1ccccc1", (3, 2, 2, 1)),
        ("Cc1ccc(C)cc1", (6, 4)),
        ("CC(C)=O", (6,)),
        ("OC(=O)c1ccccc1", (2, 2, 1, 1)),  # the acid proton is its own environment
        ("CC(C)(C)C", (12,)),
        ("FC(F)(F)Br", ()),
    ],
)
def test_proton_environments_and_integrations(smiles: str, integrations: tuple) -> None:
    counts = chem.proton_nmr_counts(smiles)
    assert counts.integrations == integrations
    assert counts.peaks == len(integrations)
    assert counts.hydrogens == chem.element_counts(smiles)["H"]


def test_explicit_hydrogens_are_folded_into_their_atoms() -> None:
    explicit = Chem.AddHs(Chem.MolFromSmiles("CCO"))
    assert explicit.GetNumAtoms() == 9
    assert chem.proton_nmr_counts(explicit).integrations == (3, 2, 1)
    assert chem.carbon_nmr_counts(explicit).peaks == 2
    params = Chem.SmilesParserParams()
    params.removeHs = False
    kept = Chem.MolFromSmiles("[H]OC([H])([H])C", params)
    assert kept.GetNumAtoms() == 6
    assert chem.proton_nmr_counts(kept).integrations == (3, 2, 1)


def test_ethanol_environments_name_their_atoms() -> None:
    environments = chem.hydrogen_environments("CCO")
    assert [(e.atoms, e.element, e.integration) for e in environments] == [
        ((0,), "C", 3),
        ((1,), "C", 2),
        ((2,), "O", 1),
    ]


def test_hydrogen_indices_follow_addhs() -> None:
    assert chem.hydrogen_atom_parents("CCO") == [(3, 0), (4, 0), (5, 0), (6, 1), (7, 1), (8, 2)]


@pytest.mark.parametrize(
    ("smiles", "present", "absent"),
    [
        ("OC(=O)c1ccccc1", {"carboxylic_acid", "aromatic_ring"}, {"hydroxyl", "ester", "ketone"}),
        ("CCOC(C)=O", {"ester"}, {"carboxylic_acid", "ketone", "ether"}),
        ("CC(N)=O", {"amide", "amide_nh"}, {"amine_nh", "ketone"}),
        ("N#Cc1ccccc1", {"nitrile", "aromatic_ring"}, {"alkyne"}),
        ("O=[N+]([O-])c1ccccc1", {"nitro"}, {"ether", "hydroxyl"}),
        ("COc1ccccc1", {"ether"}, {"hydroxyl", "ester"}),
        ("CC=O", {"aldehyde"}, {"ketone"}),
        ("CC(C)=O", {"ketone"}, {"aldehyde"}),
        ("C#CC", {"alkyne", "terminal_alkyne"}, {"nitrile"}),
        ("CCN", {"amine_nh"}, {"amide_nh"}),
        ("CS(C)(=O)=O", {"sulfone"}, {"thioether"}),
    ],
)
def test_functional_groups(smiles: str, present: set[str], absent: set[str]) -> None:
    groups = chem.functional_groups(smiles)
    assert present <= set(groups)
    assert not absent & set(groups)


def test_aromatic_rings_are_counted_once() -> None:
    assert chem.functional_groups("Cc1ccccc1")["aromatic_ring"] == 1
    assert chem.functional_groups("c1ccc2ccccc2c1")["aromatic_ring"] == 2


def test_expected_bands_follow_groups() -> None:
    names = {band.name for band in chem.expected_bands("N#Cc1ccccc1")}
    assert "C≡N stretch" in names
    assert not any("O-H" in name for name in names)
    nitrile = next(b for b in chem.CHARACTERISTIC_BANDS if b.group == "nitrile")
    assert nitrile.contains(2230) and not nitrile.contains(1700)
    # Raman drops bands that are weak in Raman (the alcohol O-H stretch), keeps strong ones.
    ir = {band.name for band in chem.expected_bands("OCc1ccccc1", "infrared")}
    raman = {band.name for band in chem.expected_bands("OCc1ccccc1", "raman")}
    assert "O-H stretch (alcohol, phenol)" in ir - raman
    assert "ring breathing (aromatic)" in raman


def test_every_band_group_is_a_known_group() -> None:
    assert {band.group for band in chem.CHARACTERISTIC_BANDS} <= set(chem.FUNCTIONAL_GROUPS)
    assert all(band.low < band.high for band in chem.CHARACTERISTIC_BANDS)


def test_smiles_validation() -> None:
    assert chem.is_valid_smiles("CCO")
    assert not chem.is_valid_smiles("C1CC")
    assert not chem.is_valid_smiles("")
    with pytest.raises(chem.InvalidSmilesError, match="cannot parse"):
        chem.parse_smiles("c1ccc")


def test_masked_smiles_validation() -> None:
    assert chem.is_valid_masked_smiles("[*]c1ccccc1")
    assert chem.is_valid_masked_smiles("<MASK>c1ccccc1", "<MASK>")
    assert not chem.is_valid_masked_smiles("<MASK>c1ccccc1")  # token not declared
    assert not chem.is_valid_masked_smiles("[*]CC[*]")  # two masks
    assert not chem.is_valid_masked_smiles("c1ccccc1")  # no mask


def test_complete_masked_smiles() -> None:
    assert chem.complete_masked_smiles("Cc1ccc([*])cc1", "[*]C") == "Cc1ccc(C)cc1"
    assert chem.complete_masked_smiles("Cc1ccc(<MASK>)cc1", "[*]C(=O)O", "<MASK>") == (
        chem.canonical_smiles("OC(=O)c1ccc(C)cc1")
    )
    assert chem.complete_masked_smiles("[*]CC", "[*][N+](=O)[O-]") == "CC[N+](=O)[O-]"
    with pytest.raises(chem.InvalidSmilesError):
        chem.complete_masked_smiles("[*]CC", "[*]CC[*]")
    with pytest.raises(chem.InvalidSmilesError, match="does not fit"):
        chem.complete_masked_smiles("FC(F)(F)[*]", "[*]=O")  # too many bonds on the carbon


def test_heavy_atom_count_ignores_the_mask() -> None:
    assert chem.heavy_atom_count("[*]C(=O)OC") == 4
    assert chem.heavy_atom_count("[*][N+](=O)[O-]") == 3
