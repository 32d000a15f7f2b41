"""A model-like system (async, prompt-consuming, text out) runs through the core unchanged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from benchreg import load_task, run_task
from benchreg.core import registry
from benchreg.core.system import BaseSystem, SystemContext
from benchreg.core.types import Prediction, Request, Status


class ScriptedChatSystem(BaseSystem):
    """Answers like a chat model: reads the prompt, returns text (some of it unusable)."""

    name = "scripted-chat"
    needs_prompts = True

    def __init__(self) -> None:
        self.seen: list[Request] = []

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        async def one(i: int, request: Request) -> Prediction:
            await asyncio.sleep(0)
            self.seen.append(request)
            rid = request.sample.id
            if i % 3 == 2:
                return Prediction(rid, status=Status.ERROR, detail="HTTP 500")
            text = "Let me think.\n" + json.dumps(
                {"record_id": rid, "selected_candidate_index": request.sample.gold}
            )
            return Prediction(rid, raw_text=text if i % 3 == 0 else "no JSON here", latency_s=0.1)

        return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))


SYSTEM = ScriptedChatSystem()


def _factory(cfg: Mapping[str, Any], ctx: SystemContext) -> ScriptedChatSystem:
    return SYSTEM


registry.systems.add("scripted_chat_for_tests", _factory)


def test_prompts_flow_to_the_system_and_text_is_parsed() -> None:
    result = run_task(
        load_task("molp2s/gap"),
        view="structure_only",
        system_cfg={"name": "scripted_chat_for_tests"},
        roots={},
    )
    first = SYSTEM.seen[0]
    assert [m.role for m in first.messages] == ["system", "user"]
    assert "No property is supplied" in first.messages[1].content
    assert first.sample.input["candidate_completed_smiles"][0] in first.messages[1].content

    statuses = [p.status for p in result.predictions]
    n = len(statuses)
    assert statuses.count(Status.OK) == len(range(0, n, 3))
    # unparseable text is invalid; a failed request is an error (one meaning per status)
    assert result.statuses["invalid"] == len(range(1, n, 3))
    assert result.statuses["error"] == len(range(2, n, 3))
    assert result.statuses["invalid"] + result.statuses["error"] == n - statuses.count(Status.OK)
    assert result.counts["hits"] == statuses.count(Status.OK)
    assert all(p.latency_s == 0.1 for p in result.predictions if p.status is Status.OK)
