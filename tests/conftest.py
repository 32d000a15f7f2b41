"""Shared fixtures. Third-party data is read in place from ../shared (never copied here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BENCHREG_SHARED", PROJECT_ROOT.parent / "shared"))


def shared_path(*parts: str) -> Path:
    """Path under ../shared; skips the test when absent, but fails under CI=true."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        reason = f"third-party data not found at {path} (expected ../shared beside the project)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI must provide it")
        pytest.skip(reason)
    return path


@pytest.fixture
def shared() -> object:
    return shared_path


@pytest.fixture(autouse=True, scope="session")
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Caches (responses, validation results, models) go to a temp folder, never to the user's
    ~/.cache/benchreg; CLI subprocesses inherit it."""
    os.environ.setdefault("BENCHREG_CACHE_DIR", str(tmp_path_factory.mktemp("benchreg_cache")))


@pytest.fixture(autouse=True, scope="session")
def buffered_output_as_in_ci() -> None:
    """CLI subprocesses get block-buffered standard output into their pipes, as on a machine that
    does not set PYTHONUNBUFFERED (CI does not; a developer's shell may)."""
    os.environ.pop("PYTHONUNBUFFERED", None)


@pytest.fixture(scope="session")
def molp2s_full_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reference-size MolP2S release generated once per test session (by this project's
    generator, builders/molp2s), shared by the tests that need full-size data."""
    from builders.molp2s import generate

    root = tmp_path_factory.mktemp("molp2s_full")
    generate.generate_release(
        root,
        n_records=generate.REFERENCE_RECORDS,
        counterfactual_sizes=generate.REFERENCE_COUNTERFACTUAL,
        seed=0,
    )
    return root
