"""Fixtures for the PromptCBLUE tests (helpers live in cblue_helpers.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def raw(shared: Callable[..., Path]) -> Path:
    """../shared/data/promptcblue/raw (dev.json + dev_structured.json), read in place."""
    return shared("data", "promptcblue", "raw")


@pytest.fixture
def reference(shared: Callable[..., Path]) -> Path:
    """../shared/data/promptcblue/reference (prediction sets and official scores)."""
    return shared("data", "promptcblue", "reference")
