"""model config validation, identity, API key lookup, retry timing, cache location."""

from __future__ import annotations

import random
import sys
from email.utils import formatdate
from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.systems.cache import CacheSettings, default_cache_dir, request_key
from benchreg.systems.chat_config import Backoff, ChatConfig, identity, parse_config
from benchreg.systems.openai import api_key_from_env
from benchreg.systems.retry import delay_before_retry, parse_retry_after, retryable_status


def test_unknown_and_missing_keys_are_clear_errors() -> None:
    with pytest.raises(BenchregError, match=r"model\.temprature: Extra inputs"):
        parse_config(ChatConfig, {"name": "openai", "model": "m", "temprature": 0})
    with pytest.raises(BenchregError, match=r"model\.model: Field required"):
        parse_config(ChatConfig, {"name": "openai", "model": "???"})
    with pytest.raises(BenchregError, match=r"model\.concurrency"):
        parse_config(ChatConfig, {"name": "openai", "model": "m", "concurrency": 0})


def test_generation_params_leave_out_server_defaults() -> None:
    config = parse_config(
        ChatConfig, {"model": "m", "top_p": None, "seed": 3, "extra_body": {"top_k": 5}}
    )
    assert config.generation() == {"temperature": 0.0, "max_tokens": 1024, "seed": 3, "top_k": 5}
    assert config.shown_name == "m"
    assert parse_config(ChatConfig, {"model": "m", "label": "mine"}).shown_name == "mine"


def test_identity_is_stable_and_sensitive() -> None:
    a = identity("http://h/v1", "m", {"temperature": 0.0, "max_tokens": 8})
    assert a == identity("http://h/v1", "m", {"max_tokens": 8, "temperature": 0.0})
    assert a["hash"] != identity("http://h/v1", "m", {"temperature": 0.1, "max_tokens": 8})["hash"]
    assert len(a["hash"]) == 12


def test_request_key_depends_on_everything_that_decides_the_answer() -> None:
    messages = [{"role": "user", "content": "hi"}]
    base = request_key("e", "m", messages, {"temperature": 0})
    assert base == request_key("e", "m", list(messages), {"temperature": 0})
    assert base != request_key("e2", "m", messages, {"temperature": 0})
    assert base != request_key("e", "m2", messages, {"temperature": 0})
    assert base != request_key("e", "m", [{"role": "user", "content": "hi!"}], {"temperature": 0})
    assert base != request_key("e", "m", messages, {"temperature": 0, "seed": 1})


def test_api_key_comes_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert api_key_from_env(None) is None
    monkeypatch.setenv("BENCHREG_K", "secret")
    assert api_key_from_env("BENCHREG_K") == "secret"
    monkeypatch.delenv("BENCHREG_K")
    with pytest.raises(BenchregError, match=r"BENCHREG_K .* is not set") as info:
        api_key_from_env("BENCHREG_K")
    assert "secret" not in str(info.value)


def test_retry_after_seconds_and_dates() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.25") == 0.25
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    when = formatdate(1_000_030, usegmt=True)
    assert parse_retry_after(when, now=1_000_000) == pytest.approx(30.0)
    assert parse_retry_after(when, now=2_000_000) == 0.0


def test_backoff_grows_is_capped_and_jittered() -> None:
    rng = random.Random(0)
    backoff = Backoff(initial_s=1, max_s=5, multiplier=2)
    delays = [delay_before_retry(backoff, k, None, rng) for k in range(6)]
    assert all(0.5 * min(5, 2**k) <= d <= min(5, 2**k) for k, d in enumerate(delays))
    assert 10 <= delay_before_retry(backoff, 0, 10, rng) <= 11  # Retry-After wins
    assert delay_before_retry(backoff, 0, 10_000, rng) <= 1.1 * backoff.max_retry_after_s


def test_which_statuses_are_retried() -> None:
    assert all(retryable_status(s) for s in (408, 429, 500, 502, 503, 504))
    assert not any(retryable_status(s) for s in (400, 401, 403, 404, 422))


def test_cache_location_and_modes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("BENCHREG_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "benchreg"
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "mine"))
    assert CacheSettings.from_options({}).path.parent == tmp_path / "mine"
    explicit = CacheSettings.from_options({"cache": "off", "cache_dir": str(tmp_path / "x")})
    assert explicit.mode == "off" and explicit.path.parent == tmp_path / "x"
    with pytest.raises(BenchregError, match="unknown cache mode 'sometimes'"):
        CacheSettings.from_options({"cache": "sometimes"})


def test_system_identity_names_model_endpoint_and_generation(fake_server) -> None:
    from tests.systems.conftest import chat_cfg, predict_direct, requests_for

    server = fake_server()
    _, report = predict_direct(chat_cfg(server.base_url, model="m1"), requests_for(1))
    info = report.stats["identity"]
    assert info["id"] == f"m1@{server.base_url}#{info['hash']}"
    _, hotter = predict_direct(chat_cfg(server.base_url, model="m1", seed=1), requests_for(1))
    assert hotter.stats["identity"]["hash"] != info["hash"]


def test_without_httpx_model_systems_say_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchreg import load_task
    from benchreg.core import registry
    from benchreg.core.system import SystemContext

    monkeypatch.setitem(sys.modules, "httpx", None)  # as if not installed
    ctx = SystemContext(load_task("molp2s/gap"), None, Path("."), [], options={"cache": "off"})
    with pytest.raises(BenchregError, match=r"needs httpx.*benchreg\[models\]"):
        registry.systems.get("openai")({"name": "openai", "model": "m"}, ctx)
