"""Illustrative property values of the MolP2S generator: plausibility and internal consistency."""

from __future__ import annotations

from benchreg.families.molp2s import chem
from builders.molp2s import synthetic


def test_illustrative_shifts_keep_the_computed_counts() -> None:
    for smiles in ("Cc1ccc(C)cc1", "CCOC(=O)c1ccccc1", "OC(=O)CC1CCCCC1", "c1ccncc1"):
        carbons = synthetic.carbon_shifts(smiles)
        protons = synthetic.proton_shifts(smiles)
        assert len(carbons) == chem.carbon_nmr_counts(smiles).peaks
        assert len({shift for _, shift in carbons}) == len(carbons)  # distinct classes stay apart
        assert len(protons) == chem.proton_nmr_counts(smiles).peaks
        assert len({shift for _, shift in protons}) == len(protons)


def test_illustrative_shifts_fall_in_textbook_regions() -> None:
    carbons = dict(synthetic.carbon_shifts("CC(=O)c1ccccc1"))
    assert 190 < carbons[(1,)] < 210  # ketone C=O
    assert 20 < carbons[(0,)] < 35  # acetyl CH3
    assert all(110 < shift < 150 for atoms, shift in carbons.items() if atoms[0] >= 3)
    protons = {env.atoms: shift for env, shift in synthetic.proton_shifts("O=Cc1ccccc1")}
    assert protons[(1,)] > 9.5  # aldehyde H
    assert all(6.5 < shift < 8.5 for atoms, shift in protons.items() if atoms != (1,))


def test_illustrative_electronic_trends() -> None:
    assert synthetic.dipole_debye("c1ccccc1") == 0.0
    assert synthetic.dipole_debye("O=[N+]([O-])c1ccccc1") > synthetic.dipole_debye("Cc1ccccc1")
    assert synthetic.gap_ev("CCCC") > synthetic.gap_ev("c1ccccc1") > synthetic.gap_ev(
        "Nc1ccc([N+](=O)[O-])cc1"
    )
    (longest, _), *_ = synthetic.uv_excitations("Nc1ccc([N+](=O)[O-])cc1")
    assert longest > synthetic.uv_excitations("c1ccccc1")[0][0]


def test_illustrative_bands_sit_inside_their_ranges() -> None:
    smiles = "CC(=O)Oc1ccc(C#N)cc1"
    bands = chem.expected_bands(smiles)
    positions = [p for p, _ in synthetic.vibrational_bands(smiles, "infrared")]
    assert len(positions) == len(bands)
    for band in bands:
        assert any(band.contains(p) for p in positions), band.name
