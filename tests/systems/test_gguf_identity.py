"""The local model's identity is its GGUF's sha256 (computed once per file version, kept in an
index by path, size, mtime and inode): another file under the same name never shares a cache key,
the same bytes under another name do."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

from benchreg.core.io import sha256_file
from benchreg.systems.gguf import SHA256_INDEX, gguf_sha256
from tests.systems.test_chat_template import write_gguf


def test_the_digest_is_the_files_sha256_and_is_kept(tmp_path: Path, monkeypatch) -> None:
    gguf = write_gguf(tmp_path / "m.gguf", {"general.architecture": "llama"})
    index = tmp_path / "index"
    assert gguf_sha256(gguf, index) == sha256_file(gguf)
    kept = json.loads((index / SHA256_INDEX).read_text())
    assert kept[str(gguf.resolve())]["sha256"] == sha256_file(gguf)
    import benchreg.core.io as io

    monkeypatch.setattr(io, "sha256_file", lambda path: "not asked again")
    assert gguf_sha256(gguf, index) == sha256_file(gguf)  # from the index
    write_gguf(gguf, {"general.architecture": "qwen2"})  # new content, same name
    os.utime(gguf, ns=(1, 1))
    assert gguf_sha256(gguf, index) == "not asked again"  # hashed anew


def test_an_unwritable_index_only_costs_time(tmp_path: Path) -> None:
    gguf = write_gguf(tmp_path / "m.gguf", {"general.architecture": "llama"})
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert gguf_sha256(gguf, blocker / "below") == sha256_file(gguf)


def test_the_llama_cpp_identity_holds_the_sha256_not_the_name(tmp_path: Path) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        return
    from benchreg.systems.chat_config import LlamaConfig
    from benchreg.systems.llama_cpp import LlamaCppSystem

    meta = {"general.architecture": "qwen2"}
    for folder in "abc":
        (tmp_path / folder).mkdir()
    a = write_gguf(tmp_path / "a" / "model.gguf", meta)
    b = write_gguf(tmp_path / "b" / "other.gguf", meta)
    c = write_gguf(tmp_path / "c" / "model.gguf", {**meta, "general.name": "x"})
    options = {"cache": "off", "cache_dir": str(tmp_path / "cache")}

    def endpoint(path: Path) -> str:
        system = LlamaCppSystem(LlamaConfig(), options, path)
        return system.identity_info["endpoint"]

    assert endpoint(a) == endpoint(b)  # the same bytes under another name
    assert endpoint(a) != endpoint(c)  # other bytes under the same name
    assert sha256_file(a) in endpoint(a)
