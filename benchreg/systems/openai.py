"""`model=openai`: any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, TGI, llama.cpp,
Ollama, hosted APIs), with concurrency, retries, a rate limit and the shared response cache."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import BaseSystem, SystemContext, SystemReport
from benchreg.core.types import Prediction, Request, Status
from benchreg.systems.cache import (
    CacheSettings,
    ResponseCache,
    canonical_json,
    request_key,
    sha256_text,
)
from benchreg.systems.chat_config import ChatConfig, identity, parse_config
from benchreg.systems.completion import Completion, Failure
from benchreg.systems.limits import FailureGuard
from benchreg.systems.run_stats import RunStats

if TYPE_CHECKING:
    from benchreg.systems.chat_client import ChatClient


class ChatSystem(BaseSystem):
    """Asks a chat-completions endpoint for each request's messages; raw text out.

    ``endpoint_id`` is what identifies the server in cache keys and the identity (default: the
    base URL); subclasses that start their own server override :meth:`start`.
    """

    needs_prompts = True

    def __init__(
        self,
        config: ChatConfig,
        options: Mapping[str, Any],
        *,
        api_key: str | None = None,
        endpoint_id: str | None = None,
    ) -> None:
        require_httpx(config.name)
        self.config = config
        self.name = config.shown_name
        self.endpoint_id = endpoint_id or config.endpoint
        self.identity_info = identity(self.endpoint_id, config.model, config.generation())
        self.cache = ResponseCache(CacheSettings.from_options(options))
        self.stats = RunStats()
        self.guard = FailureGuard(config.stop_early, self.endpoint_id, cached=self.cache.writable)
        self._api_key = api_key
        self._client: ChatClient | None = None
        self._slots = asyncio.Semaphore(config.concurrency)
        batch = int(options.get("batch_size") or config.concurrency)
        if batch < config.concurrency:
            logger.warning(
                f"run.batch_size={batch} < model.concurrency={config.concurrency}: "
                f"at most {batch} requests will be in flight"
            )

    @property
    def identity(self) -> str:
        """What the answers depend on: model, endpoint, and a hash covering the generation."""
        info = self.identity_info
        return f"{info['model']}@{info['endpoint']}#{info['hash']}"

    async def start(self) -> None:
        """Called once, before the first request that the cache cannot answer."""

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        asks = [self._ask_of(r) for r in requests]
        found = self.cache.get_many(key for key, _ in asks)
        missing = {key: messages for key, messages in asks if key not in found}
        answers: dict[str, Completion | Failure] = {}
        if missing:
            answers = await self._ask_all(missing)
        out = []
        for request, (key, messages) in zip(requests, asks, strict=True):
            cached = key in found
            out.append(self._prediction(request, key, messages, found.get(key), answers.get(key)))
            self.stats.cache_hits += cached
        self.stats.samples += len(out)
        return out

    def report(self) -> SystemReport:
        counters = self._client.counters if self._client else None
        stats = self.stats.as_dict(
            requests=counters.attempts if counters else 0,
            retries=counters.retries if counters else 0,
        )
        stats["identity"] = {**self.identity_info, "id": self.identity}
        stats["cache"] = {
            "mode": self.cache.settings.mode,
            "path": str(self.cache.settings.path),
            "writes": self.cache.writes,
            "failed_writes": self.cache.failed_writes,
        }
        notes = []
        if counters and counters.errors_by_reason:
            kinds = ", ".join(f"{k} ({n})" for k, n in sorted(counters.errors_by_reason.items()))
            notes.append(f"{self.stats.errors} requests failed: {kinds}")
        return SystemReport(notes=notes, stats=stats)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self.cache.close()

    # --- internals -----------------------------------------------------------------------------

    def _ask_of(self, request: Request) -> tuple[str, list[dict[str, str]]]:
        if not request.messages:
            raise BenchregError(
                f"sample {request.sample.id} has no prompt (the task names no prompt renderer)",
                fix="model systems need a task entry with a `prompt` section",
            )
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        key = request_key(self.endpoint_id, self.config.model, messages, self.config.generation())
        return key, messages

    async def _ask_all(
        self, missing: Mapping[str, list[dict[str, str]]]
    ) -> dict[str, Completion | Failure]:
        client = await self._connected()
        tasks = {
            key: asyncio.create_task(self._ask_one(client, key, messages))
            for key, messages in missing.items()
        }
        try:
            done, _ = await asyncio.wait(tasks.values(), return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
        return {key: task.result() for key, task in tasks.items()}

    async def _ask_one(
        self, client: ChatClient, key: str, messages: list[dict[str, str]]
    ) -> Completion | Failure:
        async with self._slots:
            self.guard.check()  # another request may have tripped it while this one waited
            answer = await client.complete(messages)
        self.stats.asked += 1
        if isinstance(answer, Completion):
            self.stats.add_usage(answer.usage, answer.latency_s)
            self.cache.put(key, answer.as_cached())
            self.guard.record(ok=True)
        else:
            self.stats.errors += 1
            self.guard.record(ok=False, reason=answer.reason)
            self.guard.check()
        return answer

    async def _connected(self) -> ChatClient:
        if self._client is None:
            from benchreg.systems.chat_client import ChatClient

            await self.start()
            self._client = ChatClient(self.config, self._api_key)
        return self._client

    def _prediction(
        self,
        request: Request,
        key: str,
        messages: list[dict[str, str]],
        cached: Mapping[str, Any] | None,
        answer: Completion | Failure | None,
    ) -> Prediction:
        sample_id = request.sample.id
        meta: dict[str, Any] = {
            "prompt_sha256": sha256_text(canonical_json(messages)),
            "request_key": key,
            "cached": cached is not None,
        }
        if cached is not None:
            answer = Completion.from_cached(cached)
        if isinstance(answer, Completion):
            meta.update(
                finish_reason=answer.finish_reason, usage=answer.usage, attempts=answer.attempts
            )
            return Prediction(
                sample_id, raw_text=answer.text, latency_s=answer.latency_s, metadata=meta
            )
        assert answer is not None
        meta["attempts"] = answer.attempts
        return Prediction(
            sample_id,
            status=Status.ERROR,
            detail=answer.reason,
            latency_s=answer.latency_s,
            metadata=meta,
        )


def require_httpx(system: str) -> None:
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise BenchregError(
            f"model={system} needs httpx, which is not installed",
            fix="pip install 'benchreg[models]'",
        ) from None


def api_key_from_env(variable: str | None) -> str | None:
    """The key named by ``model.api_key_env`` (None: no auth). The key itself is never stored."""
    if not variable:
        return None
    key = os.environ.get(variable)
    if not key:
        raise BenchregError(
            f"environment variable {variable} (model.api_key_env) is not set",
            fix=f"export {variable}=<key>, or set model.api_key_env=null for a server "
            "without authentication",
        )
    return key


@registry.systems.register("openai")
def openai_system(cfg: Mapping[str, Any], ctx: SystemContext) -> ChatSystem:
    config = parse_config(ChatConfig, cfg)
    return ChatSystem(config, ctx.options, api_key=api_key_from_env(config.api_key_env))
