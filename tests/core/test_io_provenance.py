from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_json, sha256_file
from benchreg.core.provenance import REDACTED, package_versions, redact
from benchreg.core.reader import json_lines


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "out" / "metrics.json"
    atomic_write_json(target, {"a": 1})
    atomic_write_json(target, {"a": 2})
    assert json.loads(target.read_text()) == {"a": 2}
    assert [p.name for p in target.parent.iterdir()] == ["metrics.json"]


def test_json_lines_skip_blank_lines_and_locate_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n{oops\n')
    with pytest.raises(BenchregError, match=r"x\.jsonl:4: malformed JSON"):
        list(json_lines(path))


def test_sha256_file(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"abc")
    assert sha256_file(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_secrets_are_redacted_at_any_depth() -> None:
    cfg = {
        "model": {"name": "server", "api_key": "sk-123", "headers": {"Authorization": "B x"}},
        "token_budget": None,
        "ok": "visible",
    }
    out = redact(cfg)
    assert out["model"]["api_key"] == REDACTED
    assert out["model"]["headers"]["Authorization"] == REDACTED
    assert out["ok"] == "visible"
    assert "sk-123" not in json.dumps(out)


def test_package_versions_cover_key_packages() -> None:
    versions = package_versions()
    for name in ("hydra-core", "pydantic", "rdkit", "omegaconf"):
        assert versions[name]


def test_json_lines_report_a_non_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(BenchregError, match=r"x\.jsonl:2: not UTF-8"):
        list(json_lines(path))


def test_sha256_file_is_computed_once_per_unchanged_file(tmp_path, monkeypatch) -> None:
    import hashlib
    import os

    from benchreg.core import io

    path = tmp_path / "data.jsonl"
    path.write_bytes(b"one\n")
    old = 1_000_000_000_000_000_000
    os.utime(path, ns=(old, old))
    calls = []
    real = hashlib.sha256
    real_file_digest = hashlib.file_digest
    monkeypatch.setattr(
        io.hashlib, "file_digest", lambda *a: calls.append(1) or real_file_digest(*a)
    )
    first = io.sha256_file(path)
    assert io.sha256_file(path) == first == real(b"one\n").hexdigest() and len(calls) == 1
    path.write_bytes(b"two\n")  # same size, new content: the mtime changes, so it is hashed again
    assert io.sha256_file(path) == real(b"two\n").hexdigest() and len(calls) == 2
    assert io.sha256_file(path) == real(b"two\n").hexdigest() and len(calls) == 3  # racy: again


def test_json_lines_are_json_dumps_lines_by_orjson(tmp_path: Path) -> None:
    """orjson writes what `json` wrote (values, non-ASCII as it is); what it cannot encode
    (a long integer, a non-string key) `json` writes; NaN, not JSON, is null."""
    import numpy as np

    from benchreg.core.io import (
        atomic_write_jsonl,
        dumps,
        fast_dumps,
        json_default_or_text,
        json_line,
    )

    rows = [
        {"id": "漢字", "score": np.float64(0.25), "n": np.int64(3), "path": Path("/a/b")},
        {"id": "b", "tags": {"x"}, "pair": (1, 2), "none": None, "big": 2**70},
        {"id": "c", 1: "int key"},
    ]
    want = [json.loads(json.dumps(r, default=json_default_or_text)) for r in rows]
    assert [json.loads(json_line(r)) for r in rows] == want
    assert all(json_line(r).endswith(b"\n") and b"\\u" not in json_line(r) for r in rows)
    assert json.loads(json_line({"v": float("nan")})) == {"v": None}  # JSON has no NaN
    atomic_write_jsonl(tmp_path / "s.jsonl", rows)
    text = (tmp_path / "s.jsonl").read_text("utf-8")
    assert [json.loads(line) for line in text.splitlines()] == want
    plain = {"a": [1, 2.5, "é", {"b": None}], "c": True}
    assert fast_dumps(plain) == dumps(plain)
    assert fast_dumps({"big": 2**70}) == dumps({"big": 2**70})


def test_encoded_json_is_written_as_it_is_and_scrubbed_as_its_value(monkeypatch) -> None:
    """Text encoded already (a columnar answer's preview) goes into a JSON line as it is, by
    orjson or by `json`'s fallback alike, and a registered secret inside it is redacted."""
    from benchreg.core import provenance
    from benchreg.core.io import EncodedJSON, json_line

    encoded = EncodedJSON(b'[{"source_id":"s1","score":1.5}]')
    assert json_line({"answer": encoded}) == b'{"answer":[{"source_id":"s1","score":1.5}]}\n'
    big = json_line({"answer": encoded, "n": 2**70})  # beyond orjson: `json` writes the line
    assert json.loads(big) == {"answer": [{"source_id": "s1", "score": 1.5}], "n": 2**70}
    monkeypatch.setattr(provenance, "_secret_values", {"sk-secret"})
    scrubbed = provenance.scrub({"answer": EncodedJSON(b'["sk-secret here"]')})
    assert scrubbed == {"answer": [f"{REDACTED} here"]}
