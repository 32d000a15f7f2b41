"""``python -m benchreg.systems.llama_serve ARGS``: llama-cpp-python's OpenAI-compatible server
(``python -m llama_cpp.server ARGS``), with llama.cpp's extra weight buffers off on a CPU with
AMX.

On a CPU with AMX (Intel Sapphire Rapids and later) llama.cpp repacks the weights into an AMX
buffer, and the first completion can then crash the server with a segfault
(ggml-org/llama.cpp#20824, still open; seen here with llama-cpp-python 0.3.36 and both packaged
GGUF models: the server answers ``GET /v1/models``, then dies with SIGSEGV on the first chat
completion). The server has no flag for it, so the model parameters' default is set here before
it starts: ``use_extra_bufts = False``, the plain CPU buffers every other CPU gets. Elsewhere the
server runs exactly as ``python -m llama_cpp.server``.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

SERVER = "llama_cpp.server"


def has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return False
    return any(line.startswith("flags") and " amx_int8" in line for line in text.splitlines())


def without_extra_buffers() -> None:
    """Make llama.cpp's default model parameters use no extra buffer types (no repacking)."""
    import llama_cpp.llama_cpp as native

    defaults = native.llama_model_default_params

    def plain() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    native.llama_model_default_params = plain


def main() -> None:
    if has_amx():
        without_extra_buffers()
    sys.argv[0] = SERVER
    runpy.run_module(SERVER, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
