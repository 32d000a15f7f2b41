"""The sample browser shows what a model was asked: a model run's samples.jsonl keeps the
rendered messages under ``metadata.messages``, and the page shows them as the prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchreg import RunOptions, load_task
from benchreg.app.view import write_view
from benchreg.core.run import RunOutput, evaluate
from benchreg.systems.fake_server import FakeChatServer

FAST = {"max_retries": 0, "timeout_s": 5, "preflight": False}


def _page_samples(page: Path) -> list[dict[str, Any]]:
    found = re.search(r'<script id="benchreg-data"[^>]*>(.*?)</script>', page.read_text(), re.S)
    assert found, "no embedded data in the page"
    return json.loads(found.group(1))["samples"]


def test_a_model_runs_prompt_is_shown_not_marked_not_recorded(tmp_path: Path) -> None:
    server = FakeChatServer(lifetime_s=60.0).start()
    try:
        cfg = {"name": "openai", "base_url": server.base_url, "model": "fake", **FAST}
        evaluate(
            load_task("molp2s/gap"),
            view=None,
            system_cfg=cfg,
            roots={},
            options=RunOptions(limit=3, n_boot=0, cache="off", progress=False),
            output=RunOutput(tmp_path / "run"),
        )
    finally:
        server.stop()
    rows = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").open()]
    assert all(row["metadata"]["messages"] for row in rows)  # where a model run keeps them

    samples = _page_samples(write_view(tmp_path / "run"))
    assert len(samples) == 3
    for sample, row in zip(samples, rows, strict=True):
        assert sample["m"][-1]["content"] == row["metadata"]["messages"][-1]["content"]
        assert [m["role"] for m in sample["m"]] == [m["role"] for m in row["metadata"]["messages"]]
        # shown once, as the prompt: not again among the row's other fields
        assert "messages" not in sample.get("x", {}).get("metadata", {})
        assert sample["x"]["metadata"]["request_key"] == row["metadata"]["request_key"]
