"""`model=openai`: any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, TGI, llama.cpp,
Ollama, hosted APIs), with concurrency, retries, a rate limit and the shared response cache.

Per sample it sends one of three requests:

- a chat completion of the rendered messages (default), with the answer schema's JSON Schema as
  ``response_format`` under `model.structured=json_schema|json_object`;
- a text completion of the messages as plain text (`model.endpoint=completions`, base models);
- option scoring (`model.scoring=logprobs`, choice answers): log-probabilities of a completions
  prompt that ends where the choice is written (:mod:`benchreg.systems.choices`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from loguru import logger

from benchreg.core import provenance, registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import BaseSystem, BudgetReached, SystemContext, SystemReport
from benchreg.core.text import split_reasoning
from benchreg.core.types import Choices, Prediction, Request, Sample, Status
from benchreg.systems.cache import (
    CacheSettings,
    ResponseCache,
    canonical_json,
    request_key,
    sha256_text,
)
from benchreg.systems.chat_config import ChatConfig, check_api_key_env, identity, parse_config
from benchreg.systems.choices import NoLogprobs, OptionScores, score_options
from benchreg.systems.completion import Completion, Failure
from benchreg.systems.limits import FailureGuard
from benchreg.systems.run_stats import RunStats

if TYPE_CHECKING:
    from benchreg.core.task import Task
    from benchreg.systems.chat_client import ChatClient

Messages = list[dict[str, str]]
Arrived = Callable[[str, Completion | Failure], None]
SCHEMA_NAME = "answer"


@dataclass(slots=True)
class Ask:
    """One request as it is sent: what it asks (``kind``: chat, text or options), its messages,
    the per-request body fields and its cache key."""

    key: str
    messages: Messages
    kind: str = "chat"  # chat | text | options
    extra: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None  # the text prompt (kind text / options)
    choices: Choices | None = None
    json_answer: bool = False  # the JSON reply is the answer itself (the parser is not asked)


class ChatSystem(BaseSystem):
    """Asks a chat-completions endpoint for each request's messages; raw text out.

    ``endpoint_id`` is what identifies the server in cache keys and the identity (default: the
    base URL); subclasses that start their own server override :meth:`start`, those that change
    the messages before sending (a chat format without a system role) :meth:`adapt_messages`.

    :meth:`preflight` (awaited by the core before the run folder is claimed) checks the endpoint;
    ``on_answer`` (set by the core) gets each prediction as soon as it is known (a cached one at
    once, an asked one when its answer or failure arrives), so answers are journaled as they
    arrive, not per batch.
    """

    needs_prompts = True
    on_answer: Callable[[Prediction], None] | None = None

    def __init__(
        self,
        config: ChatConfig,
        options: Mapping[str, Any],
        *,
        api_key: str | None = None,
        endpoint_id: str | None = None,
        task: Task | None = None,
    ) -> None:
        require_httpx(config.name)
        self.task = task
        config, self.generation_sources = config.with_task(task.generation if task else {})
        self.config = config
        self.name = config.shown_name
        self.endpoint_id = endpoint_id or config.endpoint_url
        self.identity_info = identity(self.endpoint_id, config.model, config.identity_generation())
        self._check_modes()
        self.cache = ResponseCache(CacheSettings.from_options(options))
        self.stats = RunStats()
        self.guard = FailureGuard(config.stop_early, self.endpoint_id, cached=self.cache.writable)
        self.preflight_info: dict[str, Any] | None = None
        self._api_key = api_key
        self._client: ChatClient | None = None
        self._slots = asyncio.Semaphore(config.concurrency)
        self._prompt_hashes: dict[str, str] = {}  # sample id -> sha256 of the messages sent
        self._live: dict[str, str | None] | None = None  # what the server reports answering
        self._cached_origins: dict[tuple[str | None, str | None], int] = {}
        self._origin_warned = False
        self._structured = {"with_schema": 0, "without_schema": 0}
        batch = int(options.get("batch_size") or config.concurrency)
        if batch < config.concurrency:
            logger.warning(
                f"run.batch_size={batch} < model.concurrency={config.concurrency}: "
                f"at most {batch} requests will be in flight"
            )
        repeats = int(options.get("repeats") or 1)
        if repeats > 1 and not self.config.generation().get("temperature"):
            logger.warning(
                f"run.repeats={repeats} at temperature 0: the repeats differ only where the "
                "server samples non-deterministically (set generation.temperature or "
                "model.temperature above 0)"
            )

    @property
    def identity(self) -> str:
        """What the answers depend on: model, endpoint, and a hash covering the generation."""
        info = self.identity_info
        return f"{info['model']}@{info['endpoint']}#{info['hash']}"

    async def start(self) -> None:
        """Called once, before the first request that the cache cannot answer."""

    async def preflight(self) -> None:
        """Check the endpoint before the first batch: reachable, authorised, the model known,
        and (when the run needs them) structured output and log-probabilities supported.
        One BenchregError naming the cause and the fix, within seconds (model.preflight=false
        skips it)."""
        if not self.config.preflight:
            return
        from benchreg.systems.preflight import EndpointCheck

        check = EndpointCheck(self.config, self._api_key, self.response_format)
        self.preflight_info = await check.run()
        if check.served is not None:
            self._live = check.served

    def adapt_messages(self, messages: Messages) -> Messages:
        """The messages as they are sent (default: as the prompt renderer made them)."""
        return messages

    def completion_prompt(self, messages: Messages) -> str:
        """The text prompt of ``messages`` for the completions endpoint: the contents as plain
        text (`model.endpoint=completions`: a base model, no chat template). A chat model
        behind a remote API has no text form benchreg can know (its template is the server's)."""
        if self.config.endpoint != "completions":
            raise BenchregError(
                "model.scoring=logprobs needs a prompt that ends where the answer's index is "
                "written, which a chat API cannot take",
                fix="set model.endpoint=completions (the messages as plain text: a base model), "
                "or use model=llama_cpp, which renders the chat template itself",
            )
        return plain_prompt(messages)

    def response_format(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """``response_format`` for a JSON Schema, in the form `model.structured` names."""
        if self.config.structured == "json_object":
            return {"type": "json_object", "schema": dict(schema)}
        return {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": dict(schema), "strict": True},
        }

    def prompt_metadata(self, messages: Messages) -> dict[str, Any]:
        """What each sample records about its prompt (the hash of the messages sent)."""
        return {"prompt_sha256": sha256_text(canonical_json(messages))}

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        asks = [self._ask_of(r) for r in requests]
        found = self.cache.get_many(ask.key for ask in asks)
        missing = {ask.key: ask for ask in asks if ask.key not in found}
        waiting: dict[str, list[int]] = {}  # request key -> the requests (by index) it answers
        out: dict[int, Prediction] = {}
        for index, (request, ask) in enumerate(zip(requests, asks, strict=True)):
            if ask.key in found:  # known now: handed on before any request is made
                prediction = self._prediction(request, ask, found[ask.key], None)
                self._deliver(out, index, prediction)
                self.stats.cache_hits += 1
            else:
                waiting.setdefault(ask.key, []).append(index)
        if missing:

            def arrived(key: str, answer: Completion | Failure) -> None:
                for index in waiting[key]:
                    prediction = self._prediction(requests[index], missing[key], None, answer)
                    self._deliver(out, index, prediction)

            await self._ask_all(missing, arrived)
        self.stats.samples += len(requests)
        return [out[i] for i in range(len(requests))]

    def report(self) -> SystemReport:
        counters = self._client.counters if self._client else None
        stats = self.stats.as_dict(
            requests=counters.attempts if counters else 0,
            retries=counters.retries if counters else 0,
        )
        stats["identity"] = {**self.identity_info, "id": self.identity}
        stats["generation"] = {  # the values used, and where each came from
            "values": self.config.identity_generation(),
            "from": self.generation_sources,
        }
        stats["cache"] = {
            "mode": self.cache.settings.mode,
            "path": str(self.cache.settings.path),
            "writes": self.cache.writes,
            "failed_writes": self.cache.failed_writes,
            "set_aside": self.cache.set_aside,
            "key": CACHE_KEY_HOLDS,
            "served_by": self._served_by(),
        }
        if self.config.structured != "off":
            stats["structured"] = {"form": self.config.structured, **self._structured}
        if self.config.scoring == "logprobs":
            stats["scoring"] = {"method": SCORING_METHOD, "top_logprobs": self.config.top_logprobs}
        stats["messages_sha256"] = messages_digest(self._prompt_hashes)
        stats["preflight"] = self.preflight_info or {
            "checked": "no (model.preflight=false)" if not self.config.preflight else "no"
        }
        notes = []
        if counters and counters.errors_by_reason:
            kinds = ", ".join(f"{k} ({n})" for k, n in sorted(counters.errors_by_reason.items()))
            notes.append(f"{self.stats.errors} requests failed: {kinds}")
        if (changed := self._changed_origins()) is not None:
            notes.append(changed)
        return SystemReport(notes=notes, stats=stats)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self.cache.close()

    def scrub(self, text: str) -> str:
        """``text`` without the API key nor any other secret registered with the core (the
        redaction marker in their place): what a server echoes never reaches the cache."""
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, provenance.REDACTED)
        return provenance.scrub(text)

    # --- internals -----------------------------------------------------------------------------

    def _check_modes(self) -> None:
        """Combinations that cannot work: one error when the system is built."""
        config = self.config
        if config.structured != "off" and config.endpoint == "completions":
            raise BenchregError(
                "model.structured needs the chat endpoint (response_format is a chat option)",
                fix="drop model.endpoint=completions or set model.structured=off",
            )
        if config.scoring == "logprobs":
            schema = self.task.schema if self.task is not None else None
            if schema is None or getattr(schema, "choices", None) is None:
                name = self.task.answer_schema.name if self.task is not None else "?"
                raise BenchregError(
                    f"model.scoring=logprobs needs a choice answer, and answer schema {name!r} "
                    "states no choices",
                    fix="use it on MolP2S or reaction-MC tasks, or set model.scoring=text",
                )

    def _ask_of(self, request: Request) -> Ask:
        if not request.messages:
            raise BenchregError(
                f"sample {request.sample.id} has no prompt (the task names no prompt renderer)",
                fix="model systems need a task entry with a `prompt` section",
            )
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        messages = self.adapt_messages(with_system(messages, self.config.system))
        params = self.config.identity_generation()
        ask = Ask("", messages)
        if request.repeat:
            params["repeat"] = request.repeat
            ask.extra["seed"] = (self.config.seed or 0) + request.repeat
        sample = request.sample
        if self.config.scoring == "logprobs":
            ask.kind = "options"
            ask.choices = self._choices(sample)
            ask.prompt = self.completion_prompt(messages) + ask.choices.prefix
            params["choices"] = [ask.choices.prefix, list(ask.choices.texts)]
        elif self.config.endpoint == "completions":
            ask.kind = "text"
            ask.prompt = self.completion_prompt(messages)
        elif self.config.structured != "off":
            schema = self._json_schema(sample)
            if schema is None:
                self._structured["without_schema"] += 1
            else:
                self._structured["with_schema"] += 1
                ask.extra["response_format"] = self.response_format(schema)
                ask.json_answer = bool(getattr(self._schema, "json_is_answer", False))
        params.update(ask.extra)
        ask.key = request_key(self.endpoint_id, self.config.model, messages, params)
        return ask

    @property
    def _schema(self) -> Any:
        return self.task.schema if self.task is not None else None

    def _json_schema(self, sample: Sample) -> dict[str, Any] | None:
        state = getattr(self._schema, "json_schema", None)
        return state(sample) if state is not None else None

    def _choices(self, sample: Sample) -> Choices:
        choices = self._schema.choices(sample)
        if choices is None or not choices.texts:
            raise BenchregError(
                f"sample {sample.id}: the answer schema states no choices for it",
                fix="set model.scoring=text",
            )
        return choices

    def _deliver(self, out: dict[int, Prediction], index: int, prediction: Prediction) -> None:
        out[index] = prediction
        self._prompt_hashes[prediction.sample_id] = prediction.metadata["prompt_sha256"]
        if self.on_answer is not None:
            self.on_answer(prediction)

    async def _ask_all(self, missing: Mapping[str, Ask], arrived: Arrived) -> None:
        client = await self._connected()
        tasks = {
            key: asyncio.create_task(self._ask_one(client, key, ask, arrived))
            for key, ask in missing.items()
        }
        try:
            done, _ = await asyncio.wait(tasks.values(), return_when=asyncio.FIRST_EXCEPTION)
            failed = [t.exception() for t in done if t.exception() is not None]
            if failed and all(isinstance(e, BudgetReached) for e in failed):
                # stop cleanly: requests in flight finish (their answers are journaled), the
                # ones waiting for a slot stop at the budget check
                await asyncio.gather(*tasks.values(), return_exceptions=True)
            if failed:
                raise failed[0]  # type: ignore[misc]
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)

    async def _ask_one(
        self, client: ChatClient, key: str, ask: Ask, arrived: Arrived
    ) -> Completion | Failure:
        queued = time.perf_counter()
        async with self._slots:
            queue_s = time.perf_counter() - queued
            self.guard.check()  # another request may have tripped it while this one waited
            if self.budget is not None:
                self.budget.check()
            answer = await self._send(client, ask)
        answer.queue_s = queue_s
        self.stats.asked += 1
        if isinstance(answer, Completion):
            answer.text = self.scrub(answer.text)  # a server that echoes the key
            if answer.reasoning:
                answer.reasoning = self.scrub(answer.reasoning)
            self.stats.add_usage(answer.usage, answer.latency_s, queue_s)
            self.cache.put(key, answer.as_cached())
            self.guard.record(ok=True)
            self._saw_live(answer)
        else:
            answer.reason = self.scrub(answer.reason)
            self.stats.errors += 1
            self.guard.record(ok=False, reason=answer.reason)
            self._unsupported(ask, answer)
        arrived(key, answer)  # journaled before the guard may stop the run
        if isinstance(answer, Failure):
            self.guard.check()
        return answer

    async def _send(self, client: ChatClient, ask: Ask) -> Completion | Failure:
        if ask.kind == "chat":
            return await client.complete(ask.messages, ask.extra)
        assert ask.prompt is not None
        if ask.kind == "text":
            return await client.complete_text(ask.prompt, ask.extra)
        assert ask.choices is not None
        probe = {
            **ask.extra,
            "max_tokens": 1,
            "logprobs": self.config.top_logprobs,
            "temperature": 0.0,
        }

        async def next_token(prompt: str) -> Completion | Failure:
            return await client.complete_text(prompt, probe)

        try:
            scores = await score_options(next_token, ask.prompt, ask.choices)
        except NoLogprobs as exc:
            raise no_logprobs(self.endpoint_id, str(exc)) from None
        if isinstance(scores, Failure):
            return scores
        return option_completion(scores, ask.choices)

    def _unsupported(self, ask: Ask, failure: Failure) -> None:
        """A server that refuses `response_format` or log-probabilities: one clear error for
        the run, not the same failure on every sample."""
        reason = failure.reason.lower()
        if "response_format" in ask.extra and "response_format" in reason:
            raise BenchregError(
                f"the server at {self.endpoint_id} refuses `response_format` "
                f"({self.config.structured} form): {failure.reason}",
                fix="set model.structured=json_object (llama-cpp-python's server takes that "
                "form) or model.structured=off",
            )
        if ask.kind == "options" and "logprob" in reason:
            raise no_logprobs(self.endpoint_id, failure.reason)

    async def _connected(self) -> ChatClient:
        if self._client is None:
            from benchreg.systems.chat_client import ChatClient

            await self.start()
            self._client = ChatClient(self.config, self._api_key)
        return self._client

    def _prediction(
        self,
        request: Request,
        ask: Ask,
        cached: Mapping[str, Any] | None,
        answer: Completion | Failure | None,
    ) -> Prediction:
        sample_id = request.sample.id
        meta: dict[str, Any] = {
            **self.prompt_metadata(ask.messages),
            "request_key": ask.key,
            "cached": cached is not None,
            "messages": ask.messages,  # the transcript: what the model was asked
        }
        if ask.prompt is not None:
            meta["prompt"] = ask.prompt
        if request.repeat:
            meta["repeat"] = request.repeat
        if cached is not None:
            answer = Completion.from_cached(cached)
            answer.text = self.scrub(answer.text)  # written by an older benchreg, maybe
            self._saw_cached(answer)
        if isinstance(answer, Failure) or answer is None:
            assert answer is not None
            meta.update(finish_reason=None, attempts=answer.attempts, queue_s=answer.queue_s)
            return Prediction(
                sample_id,
                status=Status.ERROR,
                detail=answer.reason,
                latency_s=answer.latency_s,
                metadata=meta,
            )
        meta.update(completion_metadata(answer))
        prediction = Prediction(
            sample_id, raw_text=answer.text, latency_s=answer.latency_s, metadata=meta
        )
        if ask.kind == "options" and ask.choices is not None:
            self._option_answer(prediction, ask.choices, answer)
        elif ask.json_answer:
            _json_answer(prediction)
        return prediction

    def _option_answer(self, prediction: Prediction, choices: Choices, answer: Completion) -> None:
        probs = answer.option_probs
        if not probs or len(probs) != len(choices.answers):
            prediction.status = Status.INVALID
            prediction.detail = "no option probabilities (none of the options was among the "
            prediction.detail += "server's likeliest next tokens)"
            return
        prediction.answer = choices.answers[int(np.argmax(probs))]

    def _saw_live(self, answer: Completion) -> None:
        origin = {"model": answer.served_model, "system_fingerprint": answer.system_fingerprint}
        if self._live is None or (
            self._live.get("system_fingerprint") is None and answer.system_fingerprint
        ):
            self._live = origin
        self._warn_origin()

    def _saw_cached(self, answer: Completion) -> None:
        origin = (answer.served_model, answer.system_fingerprint)
        self._cached_origins[origin] = self._cached_origins.get(origin, 0) + 1
        self._warn_origin()

    def _changed_origins(self) -> str | None:
        """Cached answers given by another model or system fingerprint than the server now
        reports answering (None: none, or nothing known to compare)."""
        live = self._live
        if live is None:
            return None
        now = (live.get("model"), live.get("system_fingerprint"))
        stale = {
            origin: n
            for origin, n in self._cached_origins.items()
            if _differs(origin[0], now[0]) or _differs(origin[1], now[1])
        }
        if not stale:
            return None
        was = ", ".join(f"{m or '?'} / {f or '?'} ({n})" for (m, f), n in stale.items())
        return (
            f"{sum(stale.values())} cached answers were given as model / system_fingerprint "
            f"{was}, and the server now reports {now[0] or '?'} / {now[1] or '?'}: they were "
            "reused under the same cache key (set model.revision=<version> to keep them apart, "
            "or run.cache=off to ask again)"
        )

    def _warn_origin(self) -> None:
        if self._origin_warned:
            return
        changed = self._changed_origins()
        if changed is not None:
            self._origin_warned = True
            logger.warning(changed)

    def _served_by(self) -> dict[str, Any]:
        return {
            "live": self._live,
            "cached": [
                {"model": m, "system_fingerprint": f, "answers": n}
                for (m, f), n in sorted(self._cached_origins.items(), key=str)
            ],
        }


CACHE_KEY_HOLDS = (
    "sha256 of the endpoint id (base URL; llama_cpp: the GGUF's sha256 and prompt format), the "
    "model name, model.revision, the messages sent, every generation setting (incl. extra_body, "
    "system, response_format, scoring, repeat)"
)
SCORING_METHOD = (
    "option probabilities from the completions endpoint's next-token log-probabilities at the "
    "position where the choice is written (benchreg.systems.choices), normalised over the options"
)


def _differs(cached: str | None, now: str | None) -> bool:
    return cached is not None and now is not None and cached != now


def completion_metadata(answer: Completion) -> dict[str, Any]:
    """What a sample records of an answer beside its text: finish reason, usage, attempts,
    queue time, reasoning (the server's `reasoning_content`, else the reply's `<think>`
    blocks), reasoning tokens, whether the reasoning hit the token limit, and who answered."""
    meta: dict[str, Any] = {
        "finish_reason": answer.finish_reason,
        "usage": answer.usage,
        "attempts": answer.attempts,
        "queue_s": round(answer.queue_s, 6),
    }
    split = split_reasoning(answer.text)
    reasoning = answer.reasoning or split.reasoning
    if reasoning is not None:
        meta["reasoning"] = reasoning
        if "reasoning_tokens" in answer.usage:
            meta["reasoning_tokens"] = answer.usage["reasoning_tokens"]
        stopped = answer.finish_reason == "length"
        meta["reasoning_hit_limit"] = stopped and (split.unclosed or not split.answer.strip())
    for key in ("served_model", "system_fingerprint", "server_timings"):
        value = getattr(answer, key)
        if value is not None:
            meta[key] = value
    if answer.option_probs is not None:
        meta["option_probs"] = answer.option_probs
        meta["option_mass"] = answer.option_mass
    return meta


def _json_answer(prediction: Prediction) -> None:
    """A structured reply whose JSON is the answer: decoded into ``answer`` (the schema checks
    it; the text parser is not asked), or invalid when it is not JSON. Raw control characters
    inside a string (a line break: llama-cpp-python's JSON grammar lets them through) are read
    as written and the answer flagged degraded."""
    text = split_reasoning(prediction.raw_text or "").answer
    try:
        prediction.answer = json.loads(text)
        return
    except ValueError as exc:
        error = exc
    try:
        prediction.answer = json.loads(text, strict=False)
    except ValueError:
        prediction.status = Status.INVALID
        prediction.detail = f"structured reply is not JSON ({error.msg}): {text[:80]!r}"
        return
    prediction.degraded = (
        "structured reply with raw control characters inside a JSON string (not strict JSON; "
        "read as written)"
    )


def option_completion(scores: OptionScores, choices: Choices) -> Completion:
    """Option scores as an answer: the likeliest option's reply as its text."""
    best = scores.best
    space = " " if choices.prefix.endswith(":") else ""
    return Completion(
        text=choices.prefix + space + choices.texts[best] + choices.suffix,
        finish_reason="logprobs",
        usage=scores.usage,
        latency_s=scores.latency_s,
        attempts=scores.attempts,
        option_probs=[round(p, 9) for p in scores.probs],
        option_mass=round(scores.mass, 9),
        server_timings={"option_requests": scores.requests, "options_bounded": scores.bounded},
    )


def no_logprobs(endpoint: str, detail: str) -> BenchregError:
    return BenchregError(
        f"the server at {endpoint} gives no log-probabilities, which model.scoring=logprobs "
        f"needs ({detail[:200]})",
        fix="use a server whose completions endpoint returns `logprobs` (llama.cpp, vLLM, "
        "SGLang; llama-cpp-python with logits_all), or set model.scoring=text",
    )


def with_system(messages: Messages, system: str | None) -> Messages:
    """``system`` (model.system or the task's generation.system) before the prompt's own system
    text: merged into its system message (``system\\n\\n<prompt's system>``) or put first."""
    if not system:
        return messages
    if messages and messages[0]["role"] == "system":
        first = {**messages[0], "content": f"{system}\n\n{messages[0]['content']}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": system}, *messages]


def plain_prompt(messages: Messages) -> str:
    """The messages as plain text for a base model: the contents, a blank line apart, and a
    blank line after them (where the reply starts)."""
    return "\n\n".join(m["content"] for m in messages) + "\n\n"


def require_httpx(system: str) -> None:
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise BenchregError(
            f"model={system} needs httpx, which is not installed",
            fix="pip install 'benchreg[models]'",
        ) from None


def api_key_from_env(variable: str | None) -> str | None:
    """The key named by ``model.api_key_env`` (None: no auth). The key itself is never stored:
    it is registered with the core, which scrubs it by value from every output it writes."""
    if not variable:
        return None
    check_api_key_env(variable)
    key = os.environ.get(variable)
    if not key or not key.strip():
        raise BenchregError(
            f"environment variable {variable} (model.api_key_env) is not set",
            fix=f"export {variable}=<key>, or set model.api_key_env=null for a server "
            "without authentication",
        )
    provenance.register_secret(key)
    return key


def messages_digest(prompt_hashes: Mapping[str, str]) -> str | None:
    """One sha256 over the messages sent for every sample of the run (by sample id)."""
    if not prompt_hashes:
        return None
    lines = "\n".join(f"{k}\t{v}" for k, v in sorted(prompt_hashes.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


@registry.systems.register("openai")
def openai_system(cfg: Mapping[str, Any], ctx: SystemContext) -> ChatSystem:
    config = parse_config(ChatConfig, cfg)
    return ChatSystem(
        config, ctx.options, api_key=api_key_from_env(config.api_key_env), task=ctx.task
    )
