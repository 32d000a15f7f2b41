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
import functools
import hashlib
import importlib.util
import itertools
import json
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    FLUSH_AFTER_S,
    CacheSettings,
    ResponseCache,
    canonical_json,
    request_key,
    sha256_text,
)
from benchreg.systems.chat_config import (
    ChatConfig,
    check_api_key_env,
    identity,
    parse_config,
    shown_variable,
    unset_variable_message,
)
from benchreg.systems.choices import Ask as NextToken
from benchreg.systems.choices import NoLogprobs, OptionScores, score_options
from benchreg.systems.completion import Completion, Failure
from benchreg.systems.limits import FailureGuard
from benchreg.systems.prefill import PREFILL_FIELDS, PrefillAsker, no_chat_logprobs, no_prefill
from benchreg.systems.run_stats import RunStats
from benchreg.systems.usage import UsageEstimator, prompt_text
from benchreg.systems.waiting import ServerWait

if TYPE_CHECKING:
    from benchreg.core.task import Task
    from benchreg.systems.chat_client import ChatClient
    from benchreg.systems.served import Served

Messages = list[dict[str, str]]
SCHEMA_NAME = "answer"
CACHE_CHUNK = 64  # requests whose answers are looked up in the cache at once


@dataclass(slots=True)
class _Flow:
    """One predict() call: its requests, when they were handed over, the answers by place, the
    prompts in flight (request key -> the places waiting for its answer) and those answered."""

    requests: Sequence[Request]
    handed: float
    out: list[Prediction | None]
    waiting: dict[str, list[int]] = field(default_factory=dict)
    answered: dict[str, Completion | Failure] = field(default_factory=dict)
    arrived: deque[tuple[str, Ask, Completion]] = field(default_factory=deque)  # to hand on
    failed: BaseException | None = None  # what handing an answer on raised


@dataclass(slots=True)
class Ask:
    """One request as it is sent: what it asks (``kind``: chat, text or options), its messages,
    the per-request body fields and its cache key."""

    key: str
    messages: Messages
    kind: str = "chat"  # chat | text | options
    extra: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None  # the text prompt (kind text / options over completions)
    # options over chat: the reply so far, sent as a final assistant message the server continues
    prefill: str | None = None
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
    arrive. The core hands over every request of the run in one :meth:`predict` call
    (``answers_one_by_one``): `model.concurrency` workers take the next request as soon as they
    are free, from the first to the last, and the adaptive window of the client
    (:mod:`benchreg.systems.window`) may hold fewer in flight while the server pushes back.
    """

    needs_prompts = True
    answers_one_by_one = True
    on_answer: Callable[[Prediction], None] | None = None
    # ask the server what it serves before the first request (llama_cpp: no, its key holds the
    # GGUF's sha256, and its server is not up yet)
    probes_weights = True

    def __init__(
        self,
        config: ChatConfig,
        options: Mapping[str, Any],
        *,
        api_key: str | None = None,
        endpoint_id: str | None = None,
        task: Task | None = None,
    ) -> None:
        require_client(config.name)
        self.task = task
        config, self.generation_sources = config.with_task(task.generation if task else {})
        self.config = config
        self.name = config.shown_name
        self.endpoint_id = endpoint_id or config.endpoint_url
        self.identity_info = identity(self.endpoint_id, config.model, config.identity_generation())
        self._check_modes()
        self.cache = ResponseCache(CacheSettings.from_options(options))
        self.stats = RunStats()
        self._usage = UsageEstimator(self.endpoint_id, config.max_tokens)
        self.guard = FailureGuard(config.stop_early, self.endpoint_id, cached=self.cache.writable)
        self.preflight_info: dict[str, Any] | None = None
        self.weights: Served | None = None  # what the server said it serves (pin_weights)
        self._api_key = api_key
        self._client: ChatClient | None = None
        self._prompt_hashes: dict[str, str] = {}  # sample id -> sha256 of the messages sent
        self._live: dict[str, str | None] | None = None  # what the server reports answering
        self._cached_origins: dict[tuple[str | None, str | None], int] = {}
        self._origin_warned = False
        self._structured = {"with_schema": 0, "without_schema": 0}
        repeats = int(options.get("repeats") or 1)
        if repeats > 1 and not self.config.generation().get("temperature"):
            logger.warning(
                f"run.repeats={repeats} at temperature 0: the repeats differ only where the "
                "server samples non-deterministically (set generation.temperature or "
                "model.temperature above 0)"
            )

    @property
    def identity(self) -> str:
        """What the answers depend on: model, endpoint, and a hash covering the generation and
        what the server said pins the weights it serves."""
        info = self.identity_info
        return f"{info['model']}@{info['endpoint']}#{info['hash']}"

    async def start(self) -> None:
        """Called once, before the first request that the cache cannot answer."""

    async def preflight(self) -> None:
        """Check the endpoint before the first batch: reachable, authorised, the model known,
        and (when the run needs them) structured output and log-probabilities supported.
        One BenchregError naming the cause and the fix, within seconds (model.preflight=false
        skips it). Then the server is asked what it serves (:meth:`pin_weights`), also with
        model.preflight=false: a swap of weights must never be answered from the cache."""
        if self.config.preflight:
            from benchreg.systems.preflight import EndpointCheck

            check = EndpointCheck(self.config, self._api_key, self.response_format)
            self.preflight_info = await check.run()
            if check.served is not None:
                self._live = check.served
            await self.pin_weights(check.listing)
        await self.pin_weights()

    async def pin_weights(self, listing: tuple[int, Any] | None = None) -> None:
        """Ask the server, once, what it serves as the model (:mod:`benchreg.systems.served`)
        and put what pins the weights into the cache key and the identity; say once when
        nothing does. ``listing``: the endpoint check's ``GET /models`` answer."""
        if self.weights is not None or not self.probes_weights:
            return
        from benchreg.systems.served import served_weights, weights_note

        self.weights = await served_weights(
            self.config, api_key=self._api_key, scrub=self.scrub, cache=self.cache, listing=listing
        )
        info = self.identity_info  # as built, plus the weights (the hash covers them)
        pin = self.weights.pin or None
        self.identity_info = identity(info["endpoint"], info["model"], info["generation"], pin)
        note, warn = weights_note(self.weights, self.config)
        if note is not None and warn:
            logger.warning(note)

    def adapt_messages(self, messages: Messages) -> Messages:
        """The messages as they are sent (default: as the prompt renderer made them)."""
        return messages

    @property
    def options_over_chat(self) -> bool:
        """Option scoring continues an assistant prefill over the chat endpoint (a chat model
        behind a remote API: its template is the server's, so the server must end the prompt
        inside the reply); `model.endpoint=completions` reads a plain-text prompt instead."""
        return self.config.endpoint == "chat"

    def completion_prompt(self, messages: Messages) -> str:
        """The text prompt of ``messages`` for the completions endpoint: the contents as plain
        text (`model.endpoint=completions`: a base model, no chat template)."""
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
        """Every request answered, in order; each answer handed to ``on_answer`` as it arrives."""
        await self.pin_weights()  # the keys hold the weights (done by preflight in a run)
        flow = _Flow(requests, time.perf_counter(), [None] * len(requests))
        todo = self._to_send(flow)
        first = next(todo, None)
        if first is not None:  # a fully cached run connects to nothing (nor starts a server)
            client = await self._connected()
            async with self._waiting(flow):
                await self._ask_window(client, itertools.chain([first], todo), flow)
        self.stats.samples += len(requests)
        return flow.out  # type: ignore[return-value]  # every place filled

    def _waiting(self, flow: _Flow) -> ServerWait:
        """A line for every half minute in which the server answers nothing."""
        hint = (
            f"an attempt gives up after model.timeout_s={self.config.timeout_s:g} s without a "
            f"byte, then is retried up to model.max_retries={self.config.max_retries} times"
        )
        out = flow.out
        return ServerWait(self.endpoint_id, len(out), lambda: sum(p is not None for p in out), hint)

    def report(self) -> SystemReport:
        self.cache.flush()  # the writes counted below are all of them
        counters = self._client.counters if self._client else None
        stats = self.stats.as_dict(
            requests=counters.attempts if counters else 0,
            retries=counters.retries if counters else 0,
        )
        stats["identity"] = {**self.identity_info, "id": self.identity}
        stats.update(self._transport_stats())
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
            stats["scoring"] = {
                "method": SCORING_OVER_CHAT if self.options_over_chat else SCORING_METHOD,
                "top_logprobs": self.config.top_logprobs,
            }
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
        if self.weights is not None:
            from benchreg.systems.served import weights_note

            stats["served"] = self.weights.as_dict()
            if (said := weights_note(self.weights, self.config)[0]) is not None:
                notes.append(said)
        return SystemReport(notes=notes, stats=stats)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self.cache.close()

    def _transport_stats(self) -> dict[str, Any]:
        """How requests went out: the adaptive window (how far the server's pushback lowered
        it) and the streamed answers."""
        config, client = self.config, self._client
        window = {"configured": config.concurrency}
        if client is not None:
            window = client.window.as_dict()
        counters = client.counters if client is not None else None
        transport = {
            "client": "aiohttp",
            "stream": client.stream if client is not None else config.stream,
            "streamed_answers": counters.streamed if counters else 0,
            "streamed_without_usage": counters.streamed_without_usage if counters else 0,
            "timeout_s": config.timeout_s,
            "timeout_means": "the longest silence of the server while an answer was awaited",
            "connect_timeout_s": config.connect_timeout_s,
        }
        return {"concurrency": window, "transport": transport}

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
        # every repeat has its seed (base + r): the key is then the request itself, so repeat 0
        # of a run with run.repeats=3 is the plain run's request and shares its cache entry
        ask.extra["seed"] = self.config.seed_of(request.repeat)
        sample = request.sample
        if self.config.scoring == "logprobs":
            ask.kind = "options"
            ask.choices = self._choices(sample)
            if self.options_over_chat:
                ask.prefill = ask.choices.prefix
                params["prefill"] = "continue_final_message"  # not a completion's request
            else:
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
        weights = self.weights.pin if self.weights is not None else None
        ask.key = request_key(self.endpoint_id, self.config.model, messages, params, weights)
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

    def _deliver(self, out: list[Prediction | None], index: int, prediction: Prediction) -> None:
        out[index] = prediction
        self._prompt_hashes[prediction.sample_id] = prediction.metadata["prompt_sha256"]
        if self.on_answer is not None:
            self.on_answer(prediction)

    def _to_send(self, flow: _Flow) -> Iterator[tuple[str, Ask]]:
        """The requests to send, in order, each prompt once. Built as the workers pull them
        (never all at once: memory stays flat at 100k requests); the cache is asked
        ``CACHE_CHUNK`` requests at a time, and its answers, and those of a prompt asked
        already, are handed on as they are found."""
        requests = flow.requests
        for start in range(0, len(requests), CACHE_CHUNK):
            indices = range(start, min(start + CACHE_CHUNK, len(requests)))
            asks = [self._ask_of(requests[i]) for i in indices]
            found = self.cache.get_many(ask.key for ask in asks)
            for index, ask in zip(indices, asks, strict=True):
                key = ask.key
                if key in found:
                    self.stats.cache_hits += 1
                    prediction = self._prediction(requests[index], ask, found[key], None)
                    self._deliver(flow.out, index, prediction)
                elif key in flow.waiting:  # in flight: answered with it
                    flow.waiting[key].append(index)
                elif key in flow.answered:
                    prediction = self._prediction(requests[index], ask, None, flow.answered[key])
                    self._deliver(flow.out, index, prediction)
                else:
                    flow.waiting[key] = [index]
                    yield key, ask

    async def _ask_window(
        self, client: ChatClient, todo: Iterator[tuple[str, Ask]], flow: _Flow
    ) -> None:
        """`model.concurrency` workers pulling from ``todo`` until it runs out. A budget spent
        stops them cleanly (requests in flight finish and are journaled, the next ones are not
        started); any other error stops the rest at once."""
        workers = [
            asyncio.create_task(self._worker(client, todo, flow))
            for _ in range(self.config.concurrency)
        ]
        try:
            done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            failed = [t.exception() for t in done if not t.cancelled() and t.exception()]
            if failed and all(isinstance(e, BudgetReached) for e in failed):
                await asyncio.gather(*workers, return_exceptions=True)
            if failed:
                raise failed[0]  # type: ignore[misc]
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            self._hand_on(flow)  # every answer received, whatever stopped the workers
        if flow.failed is not None:
            raise flow.failed

    async def _worker(
        self, client: ChatClient, todo: Iterator[tuple[str, Ask]], flow: _Flow
    ) -> None:
        for key, ask in todo:
            if flow.failed is not None:  # handing an answer on failed (the journal, a sink)
                raise flow.failed
            answer = await self._ask_one(client, ask, flow.handed)
            flow.answered[key] = answer
            if isinstance(answer, Completion) and self.budget is None:
                # handed on once this worker's next request is sent: the window refills first
                flow.arrived.append((key, ask, answer))
                if len(flow.arrived) == 1:
                    asyncio.get_running_loop().call_soon(self._hand_on_soon, flow)
                continue
            self._hand_on(flow)  # in order, and journaled before the guard may stop the run
            self._answer_waiting(flow, key, ask, answer)
            if isinstance(answer, Failure):
                self.guard.check()

    def _hand_on(self, flow: _Flow) -> None:
        while flow.arrived:
            self._answer_waiting(flow, *flow.arrived.popleft())

    def _hand_on_soon(self, flow: _Flow) -> None:
        """:meth:`_hand_on` as an event-loop callback, whose errors the loop would only log:
        kept for the workers to raise."""
        try:
            self._hand_on(flow)
        except Exception as exc:
            if flow.failed is None:
                flow.failed = exc

    def _answer_waiting(
        self, flow: _Flow, key: str, ask: Ask, answer: Completion | Failure
    ) -> None:
        """``answer`` to every request waiting for it (the same prompt asked more than once)."""
        for index in flow.waiting.pop(key):
            prediction = self._prediction(flow.requests[index], ask, None, answer)
            self._deliver(flow.out, index, prediction)

    async def _ask_one(self, client: ChatClient, ask: Ask, handed: float) -> Completion | Failure:
        queue_s = time.perf_counter() - handed  # since the core handed the requests over
        self.guard.check()  # another request may have tripped it meanwhile
        if self.budget is not None:
            self.budget.check()
        answer = await self._send(client, ask)
        answer.queue_s = queue_s
        self.stats.asked += 1
        if isinstance(answer, Completion):
            answer.text = self.scrub(answer.text)  # a server that echoes the key
            if answer.reasoning:
                answer.reasoning = self.scrub(answer.reasoning)
            if self.budget is not None:  # counted whatever the server says of its usage
                sent = prompt_text(ask.messages, ask.prompt) + (ask.prefill or "")
                self._usage.fill(answer, sent, _requests(answer))
            self.stats.add_usage(answer.usage, answer.latency_s, queue_s)
            self.cache.put(ask.key, answer.as_cached())
            if self.cache.pending == 1:  # written with the others that come meanwhile
                asyncio.get_running_loop().call_later(FLUSH_AFTER_S, self.cache.flush)
            self.guard.record(ok=True)
            self._saw_live(answer)
        else:
            answer.reason = self.scrub(answer.reason)
            self.stats.errors += 1
            self.guard.record(ok=False, reason=answer.reason)
            self._unsupported(ask, answer)
        return answer

    async def _send(self, client: ChatClient, ask: Ask) -> Completion | Failure:
        if ask.kind == "chat":
            return await client.complete(ask.messages, ask.extra)
        if ask.kind == "text":
            assert ask.prompt is not None
            return await client.complete_text(ask.prompt, ask.extra)
        assert ask.choices is not None
        next_token: NextToken
        if ask.prefill is not None:  # over chat: the server continues the reply so far
            next_token = PrefillAsker(
                client, ask.messages, ask.extra, self.config.top_logprobs, self.endpoint_id
            )
            start = ask.prefill
        else:
            assert ask.prompt is not None
            probe = {
                **ask.extra,
                "max_tokens": 1,
                "logprobs": self.config.top_logprobs,
                "temperature": 0.0,
            }
            next_token = functools.partial(client.complete_text, extra=probe)
            start = ask.prompt
        try:
            scores = await score_options(next_token, start, ask.choices)
        except NoLogprobs as exc:
            if ask.prefill is not None:
                raise no_chat_logprobs(self.endpoint_id, str(exc)) from None
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
        if (
            ask.kind == "options"
            and ask.prefill is not None
            and any(field in reason for field in PREFILL_FIELDS)
        ):
            raise no_prefill(self.endpoint_id, f"refuses it: {failure.reason}")
        if ask.kind == "options" and "logprob" in reason:
            refused = no_chat_logprobs if ask.prefill is not None else no_logprobs
            raise refused(self.endpoint_id, failure.reason)

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
        if ask.prefill is not None:  # the assistant message the server continued
            meta["prefill"] = ask.prefill
        if request.repeat:
            meta["repeat"] = request.repeat
        meta["seed"] = ask.extra.get("seed")  # what reproduces a sampled answer
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
    "sha256 of the endpoint id (base URL; llama_cpp: the GGUF's sha256 and prompt format), what "
    "the server said pins the weights it serves (system.stats.served.pin, when it said any), the "
    "model name, model.revision, the messages sent, every generation setting (incl. extra_body, "
    "system, response_format, scoring, and the seed: model.seed + the repeat)"
)
SCORING_METHOD = (
    "option probabilities from the completions endpoint's next-token log-probabilities at the "
    "position where the choice is written (benchreg.systems.choices), normalised over the options"
)
SCORING_OVER_CHAT = (
    "option probabilities from the chat endpoint's next-token log-probabilities after an "
    "assistant prefill the server continues (continue_final_message; benchreg.systems.prefill) at "
    "the position where the choice is written, normalised over the options"
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
        # beside the probabilities (also of a cached answer): the run counts them
        bounded = (answer.server_timings or {}).get("options_bounded")
        if isinstance(bounded, int):
            meta["options_bounded"] = bounded
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
        # unrounded: the metrics equal a recomputation from the raw log-probabilities (1e-9)
        option_probs=list(scores.probs),
        option_mass=scores.mass,
        server_timings={"option_requests": scores.requests, "options_bounded": scores.bounded},
    )


def _requests(answer: Completion) -> int:
    """The requests an answer took: one, or one per option scored."""
    timings = answer.server_timings or {}
    count = timings.get("option_requests") if answer.option_probs is not None else None
    return count if isinstance(count, int) and count > 0 else 1


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


def require_client(system: str) -> None:
    """The `models` extra: aiohttp (the requests) and httpx (the endpoint check)."""
    missing = [name for name in ("aiohttp", "httpx") if importlib.util.find_spec(name) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise BenchregError(
            f"model={system} needs {' and '.join(missing)}, which {verb} not installed",
            fix="pip install 'benchreg[models]'",
        )


def api_key_from_env(variable: str | None) -> str | None:
    """The key named by ``model.api_key_env`` (None: no auth). The key itself is never stored:
    it is registered with the core, which scrubs it by value from every output it writes."""
    if not variable:
        return None
    check_api_key_env(variable)
    key = os.environ.get(variable)
    if not key or not key.strip():
        shown = shown_variable(variable) or "<name>"
        raise BenchregError(
            unset_variable_message(variable),
            fix=f"export {shown}=<key> and set model.api_key_env={shown}, or set "
            "model.api_key_env=null for a server without authentication",
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
