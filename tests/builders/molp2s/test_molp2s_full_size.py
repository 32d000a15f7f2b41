"""A reference-size generated release loads through the loader with the spec's counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg import load_task
from benchreg.core.pipeline import load_dataset
from builders.molp2s import generate

LARGER = {
    "gap",
    "proton_nmr_peaks",
    "proton_nmr_integration",
    "proton_nmr_atom",
    "carbon_nmr_peaks",
    "carbon_nmr_degeneracy",
    "carbon_nmr_atom",
    "magnetic_resonance",
}


@pytest.fixture(scope="module")
def full_release(molp2s_full_release: Path) -> Path:
    return molp2s_full_release


@pytest.mark.parametrize("directory", sorted(generate.REFERENCE_COUNTERFACTUAL))
def test_full_size_release_loads_with_spec_counts(full_release: Path, directory: str) -> None:
    spec = load_task(f"molp2s/{directory}")
    sizes = {
        view: len(load_dataset(spec, view, full_release).samples)
        for view in ("correct", "shuffled", "counterfactual", "structure_only")
    }
    counterfactual = 258 if directory in LARGER else 240
    assert sizes == {
        "correct": 136,
        "shuffled": 136,
        "counterfactual": counterfactual,
        "structure_only": 136,
    }
