"""Runs that finished but are no benchmark result: their loader ran data that cannot be scored
as a benchmark (a retrieval root whose entries are void, run with `allow_void`), and their
`metrics.json` says so (`benchmark_result: false`, the loader's line in `not_a_result`). Every
table that shows such a run's numbers says so beside them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NOT_A_RESULT = "not a benchmark result"


def not_a_result_reason(record: Mapping[str, Any] | None) -> str | None:
    """Why a finished run's numbers are no benchmark result; None when they are one."""
    if not isinstance(record, Mapping) or record.get("benchmark_result") is not False:
        return None
    return str(record.get("not_a_result") or "its data cannot be scored as a benchmark")
