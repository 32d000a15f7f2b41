"""Option scoring over chat against a REAL llama.cpp server (llama-cpp-python + the packaged
SmolLM2-135M-Instruct, the session server of test_llama_cpp.py): the server ignores
`continue_final_message`, and the endpoint check says so in one line; without the check, the
options get under 1% of the model's probability and the run warns. Through a proxy that continues
the assistant message as vLLM does (the GGUF's own template rendered, the real model completing
it), the chat route gives the option probabilities of model=llama_cpp's completions route.
Skipped without the `llama` extra, a failure under CI."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from loguru import logger

from benchreg.core.errors import BenchregError
from tests.systems.conftest import preflight, run
from tests.systems.test_llama_cpp import N_CTX, _require_llama, llama_server  # noqa: F401

pytestmark = pytest.mark.slow

CHAT = {"name": "openai", "model": "smollm2", "scoring": "logprobs", "temperature": 0.0, "seed": 0}


def test_llama_cpp_python_ignores_the_prefill_and_the_check_says_so(llama_server) -> None:  # noqa: F811
    cfg = {**CHAT, "base_url": llama_server.base_url}
    with pytest.raises(BenchregError, match=r"does not continue an assistant prefill") as caught:
        preflight(cfg)
    assert "model=llama_cpp" in str(caught.value) and "\n" not in str(caught.value)


def test_without_the_check_the_options_get_little_and_the_run_warns(llama_server) -> None:  # noqa: F811
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    try:
        cfg = {**CHAT, "base_url": llama_server.base_url, "preflight": False}
        result = run("molp2s/gap", cfg, limit=2)
    finally:
        logger.remove(sink)
    mass = result.metrics["option_mass"]
    assert mass.n == 2 and mass.value < 0.05 and mass.detail["share_under_threshold"] == 1
    assert sum("little of the model's probability" in line for line in lines) == 1


class _ContinuingProxy(BaseHTTPRequestHandler):
    """What vLLM does with `continue_final_message`, over the real model: the messages before
    the final assistant message rendered with the GGUF's template (llama.cpp's own code), the
    assistant text appended, completed for one token; the answer in the chat form."""

    upstream = ""
    render: Any = None

    def do_GET(self) -> None:
        self._relay(urllib.request.Request(self.upstream + self.path.removeprefix("/v1")))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        body = json.loads(raw)
        messages = body["messages"]
        if not body.get("continue_final_message"):  # the endpoint check's plain chat request
            headers = {"Content-Type": "application/json"}
            url = self.upstream + self.path.removeprefix("/v1")
            self._relay(urllib.request.Request(url, raw, headers))
            return
        assert messages[-1]["role"] == "assistant" and body["add_generation_prompt"] is False
        prompt = self.render(messages[:-1]) + messages[-1]["content"]
        asked = {"prompt": prompt, "max_tokens": 1, "temperature": 0.0}
        asked |= {"logprobs": body["top_logprobs"], "seed": body.get("seed", 0)}
        request = urllib.request.Request(
            self.upstream + "/completions",
            json.dumps(asked).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request) as answer:
            data = json.loads(answer.read())
        choice = data["choices"][0]
        top = choice["logprobs"]["top_logprobs"][0]
        alternatives = [{"token": t, "logprob": lp} for t, lp in top.items()]
        token = choice["logprobs"]["tokens"][0]
        content = [{"token": token, "logprob": top.get(token), "top_logprobs": alternatives}]
        message = {"role": "assistant", "content": choice["text"]}
        out_choice = {"index": 0, "message": message, "logprobs": {"content": content}}
        self._reply({"model": data.get("model"), "choices": [out_choice], "usage": data["usage"]})

    def _relay(self, request: urllib.request.Request) -> None:
        try:
            with urllib.request.urlopen(request) as answer:
                self._reply(json.loads(answer.read()))
        except urllib.error.HTTPError as refused:
            self._reply({"detail": refused.reason}, refused.code)

    def _reply(self, payload: Any, status: int = 200) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def continuing_proxy(llama_server) -> Iterator[str]:  # noqa: F811
    from benchreg.systems.chat_template import choose_format
    from benchreg.systems.llama_cpp import packaged_gguf

    handler = type("Proxy", (_ContinuingProxy,), {})
    handler.upstream = llama_server.base_url
    handler.render = staticmethod(choose_format(packaged_gguf(), []).rendered)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_the_chat_prefill_reads_what_the_rendered_completion_reads(continuing_proxy) -> None:
    _require_llama()
    over_chat = run("reaction_mc/single_varying", {**CHAT, "base_url": continuing_proxy}, limit=2)
    local = {"name": "llama_cpp", "n_ctx": N_CTX, "temperature": 0.0, "seed": 0}
    rendered = run("reaction_mc/single_varying", {**local, "scoring": "logprobs"}, limit=2)
    assert "assistant prefill" in over_chat.system_report.stats["preflight"]["checked"]
    # two server processes: llama.cpp's float sums differ by up to ~2e-3 in a probability (the
    # same prompt text, measured); reading the wrong position would differ by orders of magnitude
    for chat, completion in zip(over_chat.predictions, rendered.predictions, strict=True):
        assert chat.metadata["prefill"] == '{"answer":'
        mine, theirs = chat.metadata["option_probs"], completion.metadata["option_probs"]
        assert mine == pytest.approx(theirs, abs=5e-3)
        assert chat.metadata["option_mass"] == pytest.approx(
            completion.metadata["option_mass"], rel=1e-2
        )
        ranked = sorted(theirs, reverse=True)
        if ranked[0] - ranked[1] > 1e-2:  # a clear best option is the same answer
            assert chat.answer == completion.answer
    for name in ("log_loss", "brier", "ece", "option_mass"):
        assert over_chat.metrics[name].value == pytest.approx(
            rendered.metrics[name].value, rel=1e-2, abs=1e-4
        )
