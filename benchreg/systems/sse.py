"""A streamed completion (server-sent events, ``stream: true``) read back as one answer.

OpenAI-compatible servers stream ``data: <chunk JSON>`` events, then ``data: [DONE]``: chat
chunks carry ``choices[0].delta`` (``content``, ``reasoning_content`` / ``reasoning``), text
chunks ``choices[0].text``; the last ones the ``finish_reason``, and, when asked for with
``stream_options: {include_usage: true}``, a chunk with ``usage`` (and no choices). llama-server
adds ``timings``. :func:`merged` folds the events into the body a non-streamed request would have
got, so one parser reads both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

DONE = b"[DONE]"


class StreamError(Exception):
    """The stream is not a complete answer (``reason`` says why)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StreamCut(StreamError):
    """The server closed the stream (``[DONE]``) before the answer's end (no finish reason):
    llama-cpp-python does so to a streamed answer whenever another request waits for it."""


def events(raw: bytes) -> tuple[list[Any], bool]:
    """The JSON payloads of the ``data:`` events in ``raw`` (an event's data lines joined), and
    whether the ``[DONE]`` mark came. Comments (``: ping``) and other fields are skipped."""
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    out: list[Any] = []
    for block in raw.split(b"\n\n"):
        if block.startswith(b"data: ") and b"\n" not in block:  # the usual event: one line
            payload = block[6:]
        else:
            data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
            if not data:
                continue
            payload = b"\n".join(data)
        if payload.strip() == DONE:
            return out, True
        try:
            out.append(orjson.loads(payload))
        except orjson.JSONDecodeError:
            snippet = payload[:80].decode("utf-8", "replace")
            raise StreamError(f"unusable stream event: {snippet!r}") from None
    return out, False


@dataclass(slots=True)
class _Parts:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    logprobs: list[Any] = field(default_factory=list)
    logprob_form: str | None = None  # "content" (chat) or "top_logprobs" (text)
    chat: bool = True
    finish_reason: str | None = None
    top: dict[str, Any] = field(default_factory=dict)  # usage, model, system_fingerprint, ...


def merged(raw: bytes) -> dict[str, Any]:
    """The streamed answer ``raw`` as the body of one completion (chat or text)."""
    chunks, done = events(raw)
    parts = _Parts()
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        if chunk.get("error"):
            error = chunk["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise StreamError(f"stream error: {message}")
        _top_fields(parts, chunk)
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            _choice(parts, choices[0])
    if not chunks:
        raise StreamError("unusable response body: an empty stream")
    if parts.finish_reason is None:
        if done:
            raise StreamCut("ends a streamed answer early ([DONE] before any finish_reason)")
        raise StreamError("connection error: the stream ended before the answer did")
    return _body(parts)


def _top_fields(parts: _Parts, chunk: dict[str, Any]) -> None:
    for key in ("usage", "model", "system_fingerprint", "timings"):
        if chunk.get(key):
            parts.top[key] = chunk[key]


def _choice(parts: _Parts, choice: dict[str, Any]) -> None:
    delta = choice.get("delta")
    if isinstance(delta, dict):
        for key, into in (("content", parts.text), ("reasoning_content", parts.reasoning)):
            if isinstance(delta.get(key), str):
                into.append(delta[key])
        if isinstance(delta.get("reasoning"), str):
            parts.reasoning.append(delta["reasoning"])
    elif isinstance(choice.get("text"), str):
        parts.chat = False
        parts.text.append(choice["text"])
    if choice.get("finish_reason"):
        parts.finish_reason = choice["finish_reason"]
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        for form in ("content", "top_logprobs"):
            if isinstance(logprobs.get(form), list):
                parts.logprob_form = form
                parts.logprobs.extend(logprobs[form])


def _body(parts: _Parts) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": parts.finish_reason}
    text = "".join(parts.text)
    if parts.chat:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if parts.reasoning:
            message["reasoning_content"] = "".join(parts.reasoning)
        choice["message"] = message
    else:
        choice["text"] = text
    if parts.logprob_form is not None:
        choice["logprobs"] = {parts.logprob_form: parts.logprobs}
    return {"choices": [choice], **parts.top}
