"""A llama-cpp-python OpenAI-compatible server as a child process, on a free loopback port.

The child is started through a tiny launcher that asks Linux to SIGTERM it when its parent dies
(``PR_SET_PDEATHSIG``), so even a SIGKILLed benchreg leaves no server behind; a normal run stops
it in :meth:`LlamaServer.stop` (terminate, then kill after a grace period).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchreg.core.errors import BenchregError

HOST = "127.0.0.1"
STOP_GRACE_S = 10.0
LOG_TAIL_CHARS = 2000

# Runs in the child before exec: die with the parent (Linux), then become the server.
_LAUNCHER = """
import ctypes, os, sys
parent = int(sys.argv[1])
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM
if os.getppid() != parent:
    sys.exit(1)
os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def server_command(
    gguf: Path, port: int, n_ctx: int, n_threads: int | None, extra: Sequence[str]
) -> list[str]:
    # llama_cpp.server, with llama.cpp's AMX weight buffers off where they crash it (llama_serve)
    command = ["-m", "benchreg.systems.llama_serve", "--model", str(gguf), "--host", HOST]
    command += ["--port", str(port), "--n_ctx", str(n_ctx)]
    if n_threads:
        command += ["--n_threads", str(n_threads)]
    return [*command, *extra]


class LlamaServer:
    """Start with :meth:`start` (waits until it answers), stop with :meth:`stop`."""

    def __init__(self, args: Sequence[str], port: int, startup_timeout_s: float) -> None:
        self.args = list(args)
        self.port = port
        self.startup_timeout_s = startup_timeout_s
        self.base_url = f"http://{HOST}:{port}/v1"
        self._proc: subprocess.Popen[bytes] | None = None
        # read back on failure; closed in stop()
        self._log = tempfile.TemporaryFile(prefix="benchreg-llama-")  # noqa: SIM115

    async def start(self) -> None:
        launcher = [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *self.args]
        self._proc = subprocess.Popen(
            launcher, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
        )
        atexit.register(self._kill_now)
        try:
            await self._wait_ready()
        except BaseException:
            await self.stop()
            raise

    async def _wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout_s
        async with httpx.AsyncClient(timeout=5.0) as client:
            while True:
                assert self._proc is not None
                if self._proc.poll() is not None:
                    raise BenchregError(
                        f"the llama.cpp server exited with code {self._proc.returncode} before "
                        f"answering; its log ends with:\n{self.log_tail()}",
                        fix="check model.gguf and model.server_args",
                    )
                try:
                    response = await client.get(f"{self.base_url}/models")
                    if response.status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise BenchregError(
                        f"the llama.cpp server did not answer within "
                        f"{self.startup_timeout_s:g}s; its log ends with:\n{self.log_tail()}",
                        fix="raise model.startup_timeout_s or check model.gguf",
                    )
                await asyncio.sleep(0.2)

    async def stop(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            deadline = time.monotonic() + STOP_GRACE_S
            while proc.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        atexit.unregister(self._kill_now)
        self._log.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def log_tail(self) -> str:
        self._log.flush()
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - LOG_TAIL_CHARS))
        return self._log.read().decode("utf-8", "replace").strip()

    def _kill_now(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
