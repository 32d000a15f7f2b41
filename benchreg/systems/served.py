"""What a model server says it serves: the weights behind a served model name (needs aiohttp).

llama.cpp, vLLM and SGLang echo the model name they are asked for and send no
``system_fingerprint``, so another checkpoint behind the same URL and name answers like the old
one. Before the first request, :func:`probe_served` asks the server what it serves, with a few
short GETs (a 404, or any status but 200, means "not offered"):

- ``GET <base_url>/models``: the entry of the model asked for. vLLM and SGLang give ``root`` (the
  path or hub name the weights were loaded from; ``parent`` for a LoRA adapter) and
  ``max_model_len``; llama-server (C++) gives ``meta`` (``size``, ``n_params``, ...); a server
  that lists one model under another id than the name asked for (llama-cpp-python: the GGUF's
  path) names what it serves by that id.
- then, at the server's root (``base_url`` without its ``/v1``), by the listing's ``owned_by``
  (``sglang``, ``llamacpp``), else in turn until one answers: ``GET /props`` (llama-server:
  ``model_path``), ``GET /get_model_info`` (SGLang: ``model_path``, ``weight_version``),
  ``GET /info`` (TGI: ``model_id``, ``model_sha``), ``GET /api/tags`` (Ollama: the model's
  ``digest``).

:class:`Served` keeps what pins the weights (``pin``: into the cache key and the identity) apart
from what is only recorded (``info``: context length, dtype, versions). Every body is scrubbed of
the API key and the registered secrets before it is read, and redirects are not followed, so the
key goes to the server it was meant for and never into a record.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from benchreg.systems.cache import canonical_json

if TYPE_CHECKING:
    from benchreg.systems.cache import ResponseCache
    from benchreg.systems.chat_config import ChatConfig

PROBE_TIMEOUT_S = 5.0  # per GET: the probe runs in the endpoint check, which must stay quick
MAX_BODY = 1 << 20  # /props carries the chat template; anything larger is not a metadata answer
ROOT_ROUTES = ("/props", "/get_model_info", "/info", "/api/tags")
# servers whose /models listing names them (`owned_by`): the root routes worth asking
BY_OWNER: dict[str, tuple[str, ...]] = {
    "vllm": (),
    "sglang": ("/get_model_info",),
    "llamacpp": ("/props",),
}

Get = Callable[[str], Awaitable[tuple[int, Any]]]  # absolute URL -> (HTTP status, JSON or None)
Fields = tuple[dict[str, Any], dict[str, Any]]  # (pin, info)


class Unreachable(Exception):
    """The server did not answer a probe (refused, DNS, timeout): stop asking."""


@dataclass(slots=True)
class Served:
    """What the server said it serves. ``pin``: the fields that pin the weights (empty: none
    did); ``info``: the rest it said; ``asked``: route -> HTTP status (or why it gave none);
    ``remembered``: when the pin is the one recorded on an earlier run (the server did not
    answer this time), the time it was recorded."""

    pin: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    asked: dict[str, int | str] = field(default_factory=dict)
    reachable: bool = True
    remembered: float | None = None

    @property
    def pinned(self) -> bool:
        return bool(self.pin)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pinned": self.pinned,
            "pin": self.pin,
            "info": self.info,
            "asked": self.asked,
        }
        if self.remembered is not None:
            out["remembered_from"] = self.remembered
        return out


def server_root(base_url: str) -> str:
    """The server's root: ``base_url`` without a trailing ``/v1`` (where llama-server, SGLang,
    TGI and Ollama serve their own routes)."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path[: -len("/v1")] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


async def read_served(
    get: Get, base_url: str, model: str, listing: tuple[int, Any] | None = None
) -> Served:
    """Ask the server behind ``base_url`` what it serves as ``model`` (see the module doc);
    ``listing``: its ``GET /models`` answer when the endpoint check has it already."""
    served = Served()

    async def asked(url: str, route: str) -> Any:
        try:
            status, data = await get(url)
        except Unreachable as exc:
            served.asked[route] = str(exc)
            raise
        served.asked[route] = status
        return data if status == 200 else None

    try:
        if listing is None:
            models = await asked(base_url.rstrip("/") + "/models", "GET /models")
        else:
            served.asked["GET /models"] = listing[0]
            models = listing[1] if listing[0] == 200 else None
        owner = _from_listing(models, model, served)
        # a listing with `root` (vLLM-like) pinned the weights; an id alone (llama-cpp-python's
        # path, TGI's hub id) leaves the root routes to say more
        loaded_from = "models.root" in served.pin
        routes = BY_OWNER.get(owner or "", () if loaded_from else ROOT_ROUTES)
        root = server_root(base_url)
        for route in routes:
            data = await asked(root + route, f"GET {route}")
            pin, info = ROUTE_READERS[route](data, model) if data is not None else ({}, {})
            served.pin.update(pin)
            served.info.update(info)
            if pin or info:
                break  # the server said what it is: the other kinds' routes are not its own
    except Unreachable:
        served.reachable = False
    return served


async def probe_served(
    base_url: str,
    model: str,
    *,
    api_key: str | None,
    scrub: Callable[[str], str],
    timeout_s: float = PROBE_TIMEOUT_S,
    listing: tuple[int, Any] | None = None,
) -> Served:
    """:func:`read_served` over aiohttp: the key (when set) as ``Authorization: Bearer``, every
    GET within ``timeout_s``, redirects not followed, bodies scrubbed by ``scrub``."""
    import aiohttp

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:

        async def get(url: str) -> tuple[int, Any]:
            try:
                async with asyncio.timeout(timeout_s):
                    async with session.get(url, allow_redirects=False) as response:
                        status = response.status
                        body = await _body(response.content) if status == 200 else b""
            except TimeoutError:
                raise Unreachable(f"no answer within {timeout_s:g}s") from None
            except (aiohttp.ClientError, OSError) as exc:
                raise Unreachable(_failure(exc)) from None
            return status, _json(scrub(body.decode("utf-8", "replace")))

        return await read_served(get, base_url, model, listing)


async def served_weights(
    config: ChatConfig,
    *,
    api_key: str | None,
    scrub: Callable[[str], str],
    cache: ResponseCache,
    listing: tuple[int, Any] | None = None,
) -> Served:
    """What the server serves as ``config.model``, remembered in the response cache; when the
    server does not answer, the weights it reported last time (``remembered``)."""
    timeout = min(config.timeout_s, PROBE_TIMEOUT_S)
    served = await probe_served(
        config.endpoint_url,
        config.model,
        api_key=api_key,
        scrub=scrub,
        timeout_s=timeout,
        listing=listing,
    )
    scope = canonical_json([config.endpoint_url, config.model])
    if served.pinned:
        cache.remember_served(scope, served.pin)
    elif not served.reachable and (before := cache.served_before(scope)) is not None:
        served.pin, served.remembered = before
    return served


def weights_note(served: Served, config: ChatConfig) -> tuple[str | None, bool]:
    """What the run says about the weights' identity, and whether it is a warning (once, on
    the terminal and in ``system.notes``): None when the server pinned them."""
    where = f"the server at {config.endpoint_url}"
    asked = ", ".join(f"{route} ({status})" for route, status in served.asked.items())
    if served.pinned and served.remembered is None:
        return None, False
    if served.remembered is not None:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(served.remembered))
        return (
            f"{where} did not answer to say what it serves ({_why(served)}): answers are keyed "
            f"by the weights it reported on {when} ({_shown(served.pin)})",
            True,
        )
    unknown = (
        f"{where} did not answer to say what it serves ({_why(served)})"
        if not served.reachable
        else f"{where} says nothing that pins the weights behind {config.model!r} (asked {asked})"
    )
    if config.revision is not None:  # the user pinned them: nothing to warn about
        return f"{unknown}: the weights are pinned by model.revision={config.revision} only", False
    return (
        f"{unknown}: a checkpoint swapped behind this URL and name would be answered from the "
        "cache (set model.revision=<checkpoint> to keep answers of other weights apart)",
        True,
    )


def _why(served: Served) -> str:
    return "; ".join(f"{r}: {s}" for r, s in served.asked.items() if isinstance(s, str))


def _shown(pin: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in pin.items())


def _failure(exc: BaseException) -> str:
    """Why a GET got no answer, in words (the OS error where there is one)."""
    cause = getattr(exc, "os_error", None) or exc.__cause__ or exc
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, OSError) and cause.strerror:
        return f"cannot connect ({cause.strerror})"
    return type(exc).__name__


async def _body(stream: Any) -> bytes:
    """At most MAX_BODY bytes of a body (a larger one is cut, and then reads as no JSON)."""
    chunks, size = [], 0
    async for chunk in stream.iter_chunked(1 << 16):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BODY:
            break
    return b"".join(chunks)


def _json(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return None


# --- what each route says --------------------------------------------------------------------


def _from_listing(data: Any, model: str, served: Served) -> str | None:
    """Pin and info from the ``/models`` entry of ``model``; the entry's ``owned_by``."""
    items = data.get("data") if isinstance(data, dict) else None
    entries = [e for e in items if isinstance(e, dict)] if isinstance(items, list) else []
    names = {model, f"{model}:latest"}  # Ollama's name for an untagged model
    entry = next((e for e in entries if e.get("id") in names), None)
    if entry is None and len(entries) == 1:
        entry = entries[0]  # a one-model server that answers any name (llama.cpp)
    if entry is None:
        return None
    if isinstance(entry.get("id"), str) and entry["id"] not in names:
        served.pin["models.id"] = entry["id"]  # what it serves, under the name it was asked by
    for key in ("root", "parent"):
        if _text(entry.get(key)):
            served.pin[f"models.{key}"] = entry[key]
    meta = entry.get("meta")
    if isinstance(meta, dict):  # llama-server: the GGUF's size and parameter count
        for key in ("size", "n_params"):
            if isinstance(meta.get(key), int):
                served.pin[f"models.meta.{key}"] = meta[key]
        served.info.update(_picked(meta, ("ftype", "n_ctx_train", "n_vocab", "n_embd")))
    served.info.update(_picked(entry, ("owned_by", "max_model_len")))
    owner = entry.get("owned_by")
    return owner.lower() if isinstance(owner, str) else None


def _props(data: Any, model: str) -> Fields:
    """llama-server ``/props``: the GGUF's path; context, slots, build and chat template."""
    if not isinstance(data, dict):
        return {}, {}
    pin = {"props.model_path": data["model_path"]} if _text(data.get("model_path")) else {}
    info = _picked(data, ("total_slots", "build_info"))
    settings = data.get("default_generation_settings")
    if isinstance(settings, dict) and "n_ctx" in settings:
        info["n_ctx"] = settings["n_ctx"]
    if _text(data.get("chat_template")):
        info["chat_template_sha256"] = hashlib.sha256(data["chat_template"].encode()).hexdigest()
    return pin, info


def _model_info(data: Any, model: str) -> Fields:
    """SGLang ``/get_model_info``: the weights' path and, where the server has one, the version
    of weights updated in place."""
    if not isinstance(data, dict):
        return {}, {}
    pin = {
        f"model_info.{k}": data[k] for k in ("model_path", "weight_version") if _text(data.get(k))
    }
    return pin, _picked(data, ("tokenizer_path", "is_generation"))


def _tgi_info(data: Any, model: str) -> Fields:
    """TGI ``/info``: the hub model id and the commit of its weights."""
    if not isinstance(data, dict) or not _text(data.get("model_id")):
        return {}, {}
    pin = {f"info.{k}": data[k] for k in ("model_id", "model_sha") if _text(data.get(k))}
    keys = ("model_dtype", "max_input_tokens", "max_total_tokens", "version")
    return pin, _picked(data, keys)


def _ollama_tags(data: Any, model: str) -> Fields:
    """Ollama ``/api/tags``: the digest of the model asked for (``name`` or ``name:latest``)."""
    items = data.get("models") if isinstance(data, dict) else None
    names = {model, model if ":" in model else f"{model}:latest"}
    for entry in items if isinstance(items, list) else []:
        if isinstance(entry, dict) and ({entry.get("name"), entry.get("model")} & names):
            pin = {"tags.digest": entry["digest"]} if _text(entry.get("digest")) else {}
            info = _picked(entry, ("size", "modified_at"))
            details = entry.get("details")
            if isinstance(details, dict):
                info.update(_picked(details, ("parameter_size", "quantization_level", "format")))
            return pin, info
    return {}, {}


ROUTE_READERS: dict[str, Callable[[Any, str], Fields]] = {
    "/props": _props,
    "/get_model_info": _model_info,
    "/info": _tgi_info,
    "/api/tags": _ollama_tags,
}


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _picked(data: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The plain values (text, numbers, booleans) of ``keys`` that ``data`` holds."""
    return {
        k: data[k]
        for k in keys
        if isinstance(data.get(k), str | int | float | bool) and data.get(k) != ""
    }
