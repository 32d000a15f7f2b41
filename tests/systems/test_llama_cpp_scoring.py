"""Issue 20 against a REAL llama.cpp server (model=llama_cpp with the packaged
SmolLM2-135M-Instruct): structured output gives parseable choice answers, option probabilities
sum to 1 and give a log loss, a task entry's `generation.max_tokens` reaches the request, and a
different GGUF under the same settings is asked anew (no stale cache hit). Few samples and short
answers each; skipped without the `llama` extra, a failure under CI."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from benchreg.core.scoring import PROB_SUM_TOLERANCE
from benchreg.core.task import load_task
from tests.systems.conftest import run
from tests.systems.test_llama_cpp import N_CTX, _require_llama

pytestmark = pytest.mark.slow

LOCAL = {"name": "llama_cpp", "n_ctx": N_CTX, "temperature": 0.0, "seed": 0}


@pytest.mark.parametrize(("task", "limit"), [("molp2s/gap", 3), ("reaction_mc/single_varying", 2)])
def test_structured_output_gives_parseable_choice_answers(task: str, limit: int) -> None:
    _require_llama()
    result = run(task, {**LOCAL, "structured": "json_schema", "max_tokens": 32}, limit=limit)
    assert result.statuses["error"] == 0
    assert result.statuses["ok"] == limit, [(p.raw_text, p.detail) for p in result.predictions]
    stats = result.system_report.stats
    assert stats["structured"] == {"form": "json_schema", "with_schema": limit, "without_schema": 0}
    assert stats["identity"]["generation"]["structured"] == "json_schema"


@pytest.mark.parametrize(
    ("task", "limit", "options"),
    [("molp2s/gap", 3, "candidate_completed_smiles"), ("reaction_mc/single_varying", 2, "options")],
)
def test_logprob_scoring_gives_option_probabilities_and_a_log_loss(
    task: str, limit: int, options: str
) -> None:
    _require_llama()
    result = run(task, {**LOCAL, "scoring": "logprobs"}, limit=limit)
    assert result.statuses["error"] == 0 and result.statuses["ok"] == limit
    for sample, prediction in zip(result.samples, result.predictions, strict=True):
        probs = prediction.metadata["option_probs"]
        assert len(probs) == len(sample.input[options])
        assert abs(sum(probs) - 1.0) <= PROB_SUM_TOLERANCE
        assert all(p > 0 for p in probs)
        assert prediction.answer == max(range(len(probs)), key=probs.__getitem__)
        assert 0 < prediction.metadata["option_mass"] <= 1 + 1e-6
    log_loss = result.metrics["log_loss"]
    assert log_loss.n == limit and math.isfinite(log_loss.value) and log_loss.value > 0
    assert 0 <= result.metrics["brier"].value <= 2
    ece = result.metrics["ece"]
    assert 0 <= ece.value <= 1 and sum(b["n"] for b in ece.detail["reliability"]) == limit


def test_a_task_entrys_max_tokens_reaches_the_request(tmp_path: Path) -> None:
    _require_llama()
    entry = tmp_path / "tasks" / "molp2s" / "short.yaml"
    entry.parent.mkdir(parents=True)
    entry.write_text(
        "defaults:\n  - /task/_base/molp2s@_here_\n  - _self_\n"
        "name: molp2s/short\ndescription: three tokens per answer\ndata: [data/gap]\n"
        "generation:\n  max_tokens: 3\n"
    )
    task = load_task("molp2s/short", [tmp_path])
    assert task.generation == {"max_tokens": 3}
    result = run(task, LOCAL, limit=2)
    for prediction in result.predictions:
        assert prediction.metadata["usage"]["completion_tokens"] == 3
        assert prediction.metadata["finish_reason"] == "length"
    generation = result.system_report.stats["generation"]
    assert generation["values"]["max_tokens"] == 3 and generation["from"]["max_tokens"] == "task"
    overridden = run(task, {**LOCAL, "max_tokens": 5}, limit=1)  # model.* wins over the task
    assert overridden.predictions[0].metadata["usage"]["completion_tokens"] == 5


def test_another_gguf_under_the_same_name_is_asked_anew(tmp_path: Path) -> None:
    """The cache key holds the GGUF's sha256: a copy with one metadata byte changed, at the same
    file name and with the same settings, gets no answer of the original."""
    _require_llama()
    from benchreg.systems.llama_cpp import packaged_gguf

    original = packaged_gguf()
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()
    same_name = [first_dir / original.name, second_dir / original.name]
    shutil.copyfile(original, same_name[0])
    data = bytearray(original.read_bytes())
    at = data.index(b"Smollm2 135M")  # the general.name value: same length, still a valid GGUF
    data[at : at + 7] = b"Smollm3"
    same_name[1].write_bytes(bytes(data))
    cache = tmp_path / "cache"
    cfg = {**LOCAL, "max_tokens": 4}

    def asked(gguf: Path) -> int:
        result = run(
            "cblue/CHIP-CTC",
            {**cfg, "gguf": str(gguf)},
            limit=2,
            cache="read_write",
            cache_dir=cache,
        )
        return result.system_report.stats["requests"]

    assert asked(same_name[0]) == 2
    assert asked(same_name[0]) == 0  # the same model: cached
    assert asked(same_name[1]) == 2  # another model under the same name: asked anew
    assert asked(same_name[1]) == 0
