"""The endpoint check before the first batch: one line naming the cause and the fix, within
seconds, for every way an endpoint can be wrong; real loopback servers only."""

from __future__ import annotations

import time

import httpx
import pytest

from benchreg.core.errors import BenchregError
from benchreg.systems.chat_config import ChatConfig, parse_config
from benchreg.systems.preflight import EndpointCheck
from tests.systems.conftest import chat_cfg, closed_port_url, preflight, run

KEY = "sk-preflight-0123456789abcdef"


def _refusal(cfg: dict, *, within_s: float = 8.0) -> str:
    tic = time.perf_counter()
    with pytest.raises(BenchregError) as info:
        preflight(cfg)
    assert time.perf_counter() - tic < within_s
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_a_good_endpoint_passes_with_one_listing(fake_server) -> None:
    server = fake_server()
    found = preflight(chat_cfg(server.base_url))
    assert found is not None and found["checked"] == "models listing"
    assert server.counts["models"] == 1 and server.chat_requests == 0


def test_connection_refused(fake_server) -> None:
    message = _refusal(chat_cfg(closed_port_url()))
    assert "cannot reach the model server at http://127.0.0.1:" in message
    assert "connection refused" in message and "model.base_url" in message
    assert "model.preflight=false" in message  # a fully cached run replays without the server


def test_a_hung_server_is_a_timeout_of_the_short_check(silent_server) -> None:
    tic = time.perf_counter()
    message = _refusal(chat_cfg(silent_server, timeout_s=0.5))
    assert time.perf_counter() - tic < 3
    assert "no answer within 0.5s" in message


def test_the_check_waits_at_most_10_s_whatever_the_timeout() -> None:
    config = parse_config(ChatConfig, chat_cfg("http://127.0.0.1:1/v1", timeout_s=600))
    assert EndpointCheck(config, None).timeout == 10.0


def test_dns_failures_are_named_as_such() -> None:
    config = parse_config(ChatConfig, chat_cfg("http://no-such-host.invalid/v1"))
    check = EndpointCheck(config, None)
    reason = check._transport_reason(httpx.ConnectError("[Errno -2] Name or service not known"))
    assert reason == "host 'no-such-host.invalid' not found (DNS)"


def test_a_missing_key_names_api_key_env(fake_server) -> None:
    server = fake_server(require_key=KEY)
    message = _refusal(chat_cfg(server.base_url))
    assert "refuses the request (GET /models: HTTP 401: Missing bearer token)" in message
    assert "model.api_key_env=" in message


@pytest.mark.parametrize("status", [401, 403])
def test_a_wrong_key_names_the_variable_not_the_key(
    fake_server, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    server = fake_server(require_key=KEY, auth_status=status)
    monkeypatch.setenv("BENCHREG_PF_KEY", "sk-wrong-key-000000000000")
    message = _refusal(chat_cfg(server.base_url, api_key_env="BENCHREG_PF_KEY"))
    assert f"HTTP {status}: Incorrect API key provided" in message
    assert "$BENCHREG_PF_KEY (model.api_key_env=BENCHREG_PF_KEY)" in message
    assert "sk-wrong-key" not in message


def test_the_right_key_passes(fake_server, monkeypatch: pytest.MonkeyPatch) -> None:
    server = fake_server(require_key=KEY)
    monkeypatch.setenv("BENCHREG_PF_KEY", KEY)
    assert preflight(chat_cfg(server.base_url, api_key_env="BENCHREG_PF_KEY")) is not None


def test_an_unknown_model_names_the_ones_served(fake_server) -> None:
    server = fake_server(models=["qwen-7b", "llama-8b"], strict_models=True)
    message = _refusal(chat_cfg(server.base_url, model="gpt-9"))
    assert "model 'gpt-9' is not served at" in message
    assert "it serves qwen-7b, llama-8b" in message
    assert "set model.model to one of them" in message
    assert server.chat_requests == 1  # the one 1-token request that confirmed it


def test_a_server_that_ignores_model_names_is_accepted(fake_server) -> None:
    server = fake_server(models=["/models/some.gguf"])  # llama.cpp lists its file
    found = preflight(chat_cfg(server.base_url, model="anything"))
    assert found is not None and found["checked"] == "1-token chat request"


def test_without_a_models_listing_a_1_token_request_decides(fake_server) -> None:
    ok = fake_server(models=None)
    found = preflight(chat_cfg(ok.base_url))
    assert found is not None and found["checked"] == "1-token chat request"
    assert found["models_listed"] is None
    strict = fake_server(models=None, strict_models=True)
    message = _refusal(chat_cfg(strict.base_url, model="nope"))
    assert "model 'nope' is not served" in message and "no models listing" in message


def test_a_garbage_body_is_not_an_openai_api(fake_server) -> None:
    server = fake_server(garbage=True)
    message = _refusal(chat_cfg(server.base_url))
    assert "does not answer like an OpenAI-compatible API" in message
    assert "It works!" in message and "/v1" in message


def test_no_chat_route_says_where_the_api_root_is(fake_server) -> None:
    server = fake_server()
    message = _refusal(chat_cfg(server.base_url.removesuffix("/v1") + "/api"))
    assert "no chat-completions API at http://127.0.0.1:" in message
    assert "HTTP 404: Not Found" in message and "model.base_url should be the API root" in message


def test_endless_429s_stop_within_seconds(fake_server) -> None:
    server = fake_server(fail_all=429, models_status=429)
    message = _refusal(chat_cfg(server.base_url))
    assert "answers HTTP 429 (rate limited) to every request" in message
    assert server.chat_requests == 3  # a few quick attempts, not max_retries with backoff


def test_a_failing_server_is_named(fake_server) -> None:
    server = fake_server(fail_all=503, models_status=503)
    message = _refusal(chat_cfg(server.base_url))
    assert "fails: HTTP 503: always failing" in message and "server's log" in message


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://127.0.0.1/v1", "is not an http(s) URL (ftp://)"),
        ("127.0.0.1:8000/v1", "is not an http(s) URL"),
        ("http:///v1", "names no host"),
        ("http://127.0.0.1:99999/v1", "is not a valid URL (Port out of range"),
    ],
)
def test_a_base_url_that_is_not_http_is_refused_when_parsed(url: str, says: str) -> None:
    with pytest.raises(BenchregError) as info:
        parse_config(ChatConfig, chat_cfg(url))
    assert says in str(info.value) and "model.base_url=http://" in str(info.value)


def test_preflight_false_skips_the_check() -> None:
    assert preflight(chat_cfg(closed_port_url(), preflight=False)) is None


def test_the_orchestrator_stops_before_asking(fake_server) -> None:
    tic = time.perf_counter()
    with pytest.raises(BenchregError, match="connection refused"):
        run("molp2s/gap", chat_cfg(closed_port_url(), max_retries=6))
    assert time.perf_counter() - tic < 8  # not 54 s of retries
    server = fake_server()
    result = run("molp2s/gap", chat_cfg(server.base_url), limit=2)
    assert result.system_report.stats["preflight"]["checked"] == "models listing"
    assert result.system_report.stats["requests"] == 2  # the check is not counted as a request
