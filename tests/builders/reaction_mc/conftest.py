"""The builder tests check effective scores with the family tests' independent formula."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.families.reaction_mc.conftest import independent_effective


@pytest.fixture
def effective() -> Callable[[dict[str, Any]], float]:
    return independent_effective
