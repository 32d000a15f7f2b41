"""GGUF metadata and the prompt format chosen for a local model, on small GGUF files written here
(a header with metadata, no weights); the renderers are llama-cpp-python's own code."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path
from typing import Any

import pytest

from benchreg.systems.chat_template import choose_format, merge_system, user_chat_format
from benchreg.systems.gguf import GGUFError, read_metadata
from tests.systems.conftest import skip_or_fail

GEMMA_TEMPLATE = (  # the shape of Gemma's own template: the system text opens the first user turn
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{% set prefix = messages[0]['content'] + '\n\n' %}{% set loop_messages = messages[1:] %}"
    "{% else %}{% set prefix = '' %}{% set loop_messages = messages %}{% endif %}"
    "{% for m in loop_messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' "
    "else m['role'] }}\n{{ prefix if loop.first else '' }}{{ m['content'] }}<end_of_turn>\n"
    "{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
NO_SYSTEM_TEMPLATE = (  # refuses a system message, as some Mistral templates do
    "{% for m in messages %}{% if m['role'] == 'system' %}"
    "{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}"
    "[INST] {{ m['content'] }} [/INST]{% endfor %}"
)
CONVERSATION = [
    {"role": "system", "content": "Answer in JSON."},
    {"role": "user", "content": "Which candidate?"},
]


def write_gguf(path: Path, metadata: dict[str, Any]) -> Path:
    """A GGUF v3 file holding ``metadata`` (str, int, bool, list of str) and no tensor."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 0, len(metadata)))

    def text(value: str) -> bytes:
        raw = value.encode()
        return struct.pack("<Q", len(raw)) + raw

    for key, value in metadata.items():
        out += text(key)
        if isinstance(value, bool):
            out += struct.pack("<I?", 7, value)
        elif isinstance(value, int):
            out += struct.pack("<II", 4, value)
        elif isinstance(value, str):
            out += struct.pack("<I", 8) + text(value)
        else:
            out += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(text(v) for v in value)
    path.write_bytes(bytes(out))
    return path


@pytest.fixture(autouse=True)
def _llama_formats() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        skip_or_fail("llama_cpp is not installed (pip install 'benchreg[llama]')")


def test_metadata_reads_scalars_and_skips_arrays(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "m.gguf",
        {
            "general.architecture": "gemma3",
            "tokenizer.ggml.tokens": ["<pad>", "<eos>", "<bos>"],
            "tokenizer.ggml.bos_token_id": 2,
            "tokenizer.ggml.add_bos_token": True,
        },
    )
    found = read_metadata(path)
    assert found == {
        "general.architecture": "gemma3",
        "tokenizer.ggml.bos_token_id": 2,
        "tokenizer.ggml.add_bos_token": True,
    }
    tokens = read_metadata(path, arrays={"tokenizer.ggml.tokens"})["tokenizer.ggml.tokens"]
    assert tokens == ["<pad>", "<eos>", "<bos>"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"PK\x03\x04 a zip file" * 4, "not a GGUF file"),
        (b"GGUF", "truncated"),
        (b"GGUF" + struct.pack("<IQQ", 99, 0, 0), "version 99 is not supported"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40), "truncated"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1 << 40), "implausible metadata count"),
    ],
)
def test_a_damaged_gguf_is_a_clear_error(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(GGUFError, match=says):
        read_metadata(path)


def test_gemma_without_a_template_gets_llama_cpps_gemma_format_and_keeps_the_system(
    tmp_path: Path,
) -> None:
    fmt = choose_format(write_gguf(tmp_path / "g.gguf", {"general.architecture": "gemma3"}), [])
    assert fmt.name == "gemma" and fmt.server_args == ["--chat_format", "gemma"]
    assert fmt.merge_system and fmt.system_role == "merged into the first user turn"
    sent = fmt.adapt(CONVERSATION)
    assert sent == [{"role": "user", "content": "Answer in JSON.\n\nWhich candidate?"}]
    prompt = fmt.rendered(sent)
    assert prompt == (
        "<start_of_turn>user\nAnswer in JSON.\n\nWhich candidate?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )
    # without the merge, llama.cpp's gemma format drops the system text
    assert "Answer in JSON." not in fmt.rendered(CONVERSATION)


def test_the_ggufs_own_template_is_used_as_it_is(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "t.gguf",
        {
            "general.architecture": "gemma3",
            "tokenizer.chat_template": GEMMA_TEMPLATE,
            "tokenizer.ggml.tokens": ["<pad>", "<eos>", "<bos>"],
            "tokenizer.ggml.bos_token_id": 2,
            "tokenizer.ggml.eos_token_id": 1,
        },
    )
    fmt = choose_format(path, [])
    assert fmt.name == "gguf:tokenizer.chat_template" and fmt.server_args == []
    assert fmt.template_sha256 is not None and fmt.tag.startswith("tpl=")
    assert not fmt.merge_system  # the template keeps the system text itself
    assert fmt.rendered(CONVERSATION) == (
        "<bos><start_of_turn>user\nAnswer in JSON.\n\nWhich candidate?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_a_template_that_refuses_the_system_role_gets_it_merged(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "m.gguf",
        {"general.architecture": "llama", "tokenizer.chat_template": NO_SYSTEM_TEMPLATE},
    )
    fmt = choose_format(path, [])
    assert fmt.merge_system
    assert fmt.rendered(fmt.adapt(CONVERSATION)) == (
        "[INST] Answer in JSON.\n\nWhich candidate? [/INST]"
    )


def test_an_unknown_architecture_warns_and_names_the_option(tmp_path: Path) -> None:
    fmt = choose_format(write_gguf(tmp_path / "x.gguf", {"general.architecture": "rwkv7"}), [])
    assert fmt.name == "llama-2" and fmt.server_args == []
    assert fmt.warning is not None and "model.server_args=[--chat_format,<name>]" in fmt.warning
    assert not fmt.merge_system  # llama-2 has a system slot


def test_the_users_chat_format_wins(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "g.gguf", {"general.architecture": "gemma3"})
    fmt = choose_format(path, ["--chat_format", "chatml"])
    assert fmt.name == "chatml" and fmt.server_args == [] and not fmt.merge_system
    assert user_chat_format(["--n_gpu_layers", "0", "--chat_format=gemma"]) == "gemma"
    assert choose_format(path, ["--chat_format", "gemma"]).merge_system


def test_merge_system_keeps_every_turn() -> None:
    assert merge_system([{"role": "user", "content": "u"}]) == [{"role": "user", "content": "u"}]
    assert merge_system([{"role": "system", "content": "s"}]) == [{"role": "user", "content": "s"}]
    turns = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "u2"},
    ]
    assert merge_system(turns) == [
        {"role": "user", "content": "s\n\nu1"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "u2"},
    ]
