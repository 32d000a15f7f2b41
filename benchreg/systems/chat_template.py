"""Which prompt format a local llama.cpp server uses for a GGUF, and keeping the system text.

llama-cpp-python renders chat messages with the GGUF's own template (``tokenizer.chat_template``)
when it has one, else with a named chat format (``--chat_format``), else with ``llama-2``: wrong
for most models. :func:`choose_format` picks, in order:

1. the user's ``--chat_format`` in ``model.server_args``;
2. the GGUF's own ``tokenizer.chat_template``;
3. the chat format llama.cpp has for the GGUF's architecture (``gemma3`` -> ``gemma``);
4. the server's default (``llama-2``), with a warning.

The chosen template is then tried on a (system, user) conversation with the same code the server
runs (``llama_cpp.llama_chat_format``): when it drops the system text (llama.cpp's ``gemma``
format does: Gemma has no system role) or refuses a system message, the system text is merged
into the first user turn before sending, as Gemma's own template does (``system + "\\n\\n" +
user``). It is never dropped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.systems.gguf import read_metadata

# GGUF architectures without a template -> llama.cpp's matching chat format
ARCH_FORMATS = {
    "gemma": "gemma",
    "gemma2": "gemma",
    "gemma3": "gemma",
    "gemma3n": "gemma",
    "qwen": "qwen",
    "qwen2": "chatml",
    "qwen3": "chatml",
}
SERVER_DEFAULT = "llama-2"
_PROBE_SYSTEM = "benchreg-probe-system-7d1c"
_PROBE_USER = "benchreg-probe-user-42af"

Messages = list[dict[str, str]]
Renderer = Callable[[Sequence[Mapping[str, str]]], str]


@dataclass(slots=True)
class PromptFormat:
    """What the server renders with, and what benchreg does to the messages first."""

    name: str  # "gguf:tokenizer.chat_template" or a llama.cpp chat format name
    source: str  # why this one
    server_args: list[str] = field(default_factory=list)  # added to the server command
    template_sha256: str | None = None  # of the GGUF's template, when it is the one used
    merge_system: bool = False  # system text merged into the first user turn
    warning: str | None = None
    render: Renderer | None = None  # the server's own rendering, in-process (None: unknown)

    @property
    def system_role(self) -> str:
        return "merged into the first user turn" if self.merge_system else "kept as sent"

    @property
    def tag(self) -> str:
        """A short id for the identity and the cache key (answers depend on it)."""
        what = f"tpl={self.template_sha256[:12]}" if self.template_sha256 else f"fmt={self.name}"
        return what + ("+system-in-user" if self.merge_system else "")

    def adapt(self, messages: Messages) -> Messages:
        return merge_system(messages) if self.merge_system else messages

    def rendered(self, messages: Messages) -> str | None:
        """The prompt text the server builds from ``messages`` (None when unknown)."""
        if self.render is None:
            return None
        try:
            return self.render(messages)
        except Exception:
            return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.name,
            "source": self.source,
            "template_sha256": self.template_sha256,
            "system": self.system_role,
            "server_args": list(self.server_args),
        }


def merge_system(messages: Messages) -> Messages:
    """System messages folded into the first user turn (``system\\n\\nuser``), as Gemma's own
    chat template does; a conversation without a user turn gets one holding the system text."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    if not system:
        return messages
    prefix = "\n\n".join(system)
    out: Messages = []
    merged = False
    for message in messages:
        if message["role"] == "system":
            continue
        if message["role"] == "user" and not merged:
            message = {**message, "content": f"{prefix}\n\n{message['content']}"}
            merged = True
        out.append(message)
    if not merged:
        out.insert(0, {"role": "user", "content": prefix})
    return out


def user_chat_format(server_args: Sequence[str]) -> str | None:
    """The ``--chat_format`` given in ``model.server_args``, if any."""
    args = list(server_args)
    for i, arg in enumerate(args):
        if arg in ("--chat_format", "--chat-format") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(("--chat_format=", "--chat-format=")):
            return arg.split("=", 1)[1]
    return None


def choose_format(gguf: Path, server_args: Sequence[str]) -> PromptFormat:
    """The prompt format for ``gguf`` (reads its metadata: GGUFError/OSError when it cannot)."""
    metadata = read_metadata(gguf)
    template = metadata.get("tokenizer.chat_template")
    arch = str(metadata.get("general.architecture") or "unknown")
    chosen = user_chat_format(server_args)
    if chosen is not None:
        fmt = PromptFormat(chosen, "model.server_args --chat_format")
        fmt.render = _named_renderer(chosen)
    elif isinstance(template, str) and template.strip():
        fmt = PromptFormat(
            "gguf:tokenizer.chat_template",
            "the GGUF's own chat template",
            template_sha256=hashlib.sha256(template.encode()).hexdigest(),
        )
        fmt.render = _template_renderer(gguf, metadata, template)
    elif arch in ARCH_FORMATS:
        name = ARCH_FORMATS[arch]
        fmt = PromptFormat(
            name,
            f"llama.cpp's chat format for architecture {arch} (the GGUF has no chat template)",
            server_args=["--chat_format", name],
        )
        fmt.render = _named_renderer(name)
    else:
        fmt = PromptFormat(
            SERVER_DEFAULT,
            f"the server's default (the GGUF has no chat template, and benchreg knows no chat "
            f"format for architecture {arch})",
            warning=f"{gguf.name} has no chat template and benchreg knows no chat format for "
            f"its architecture {arch!r}: the server renders prompts as {SERVER_DEFAULT}, which "
            "may not be the model's format; set model.server_args=[--chat_format,<name>]",
        )
        fmt.render = _named_renderer(SERVER_DEFAULT)
    fmt.merge_system = drops_system(fmt.render)
    return fmt


def drops_system(render: Renderer | None) -> bool:
    """Whether rendering (system, user) loses the system text or refuses the system role."""
    if render is None:
        return False
    probe = [
        {"role": "system", "content": _PROBE_SYSTEM},
        {"role": "user", "content": _PROBE_USER},
    ]
    try:
        text = render(probe)
    except Exception:
        return True
    return _PROBE_SYSTEM not in text


def _named_renderer(name: str) -> Renderer | None:
    """llama.cpp's chat format ``name`` as a function (None when unknown or not installed)."""
    try:
        from llama_cpp import llama_chat_format
    except ImportError:
        return None
    for candidate in (name.replace("-", "_"), name.replace("-", "")):
        formatter = getattr(llama_chat_format, f"format_{candidate}", None)
        if callable(formatter):
            return lambda messages: formatter(messages=list(messages)).prompt
    return None


def _template_renderer(gguf: Path, metadata: Mapping[str, Any], template: str) -> Renderer | None:
    """The GGUF's template rendered as llama-cpp-python does (its Jinja2ChatFormatter)."""
    try:
        from llama_cpp import llama_chat_format
    except ImportError:
        return None
    tokens = read_metadata(gguf, arrays={"tokenizer.ggml.tokens"}).get("tokenizer.ggml.tokens")

    def token(key: str) -> str:
        index = metadata.get(key)
        if isinstance(tokens, list) and isinstance(index, int) and 0 <= index < len(tokens):
            return str(tokens[index])
        return ""

    try:
        formatter = llama_chat_format.Jinja2ChatFormatter(
            template,
            eos_token=token("tokenizer.ggml.eos_token_id"),
            bos_token=token("tokenizer.ggml.bos_token_id"),
        )
    except Exception:
        return None
    return lambda messages: formatter(messages=list(messages)).prompt
