"""The server wrapper turns llama.cpp's extra weight buffers off on AMX CPUs only."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.systems import llama_serve
from tests.systems.conftest import skip_or_fail


@pytest.mark.parametrize(
    ("flags", "amx"),
    [("fpu avx2 avx512f amx_bf16 amx_tile amx_int8 arch", True), ("fpu avx2 avx512f", False)],
)
def test_amx_read_from_the_cpu_flags(tmp_path: Path, flags: str, amx: bool) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n"
    )
    assert llama_serve.has_amx(cpuinfo) is amx
    assert llama_serve.has_amx(tmp_path / "absent") is False


def test_default_model_params_lose_the_extra_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        import llama_cpp.llama_cpp as native
    except ImportError:
        skip_or_fail("llama_cpp is not installed (pip install 'benchreg[llama]')")
    monkeypatch.setattr(native, "llama_model_default_params", native.llama_model_default_params)
    assert native.llama_model_default_params().use_extra_bufts
    llama_serve.without_extra_buffers()
    assert not native.llama_model_default_params().use_extra_bufts
