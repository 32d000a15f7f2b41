"""The TFRecord / tf.train.Example reader on files written here by a minimal encoder."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from benchreg.families.retrieval.tfrecord import (
    TFRecordError,
    crc32c,
    masked_crc32c,
    read_examples,
)


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def feature(values: list) -> bytes:
    if all(isinstance(v, bytes) for v in values):
        return field(1, b"".join(field(1, v) for v in values))
    if all(isinstance(v, float) for v in values):
        return field(2, field(1, struct.pack(f"<{len(values)}f", *values)))
    return field(3, field(1, b"".join(varint(v) for v in values)))


def example(features: dict[str, list]) -> bytes:
    entries = b"".join(field(1, field(1, k.encode()) + field(2, feature(v)))
                       for k, v in features.items())
    return field(1, entries)


def write(path: Path, payloads: list[bytes]) -> None:
    with path.open("wb") as f:
        for p in payloads:
            length = struct.pack("<Q", len(p))
            f.write(length + struct.pack("<I", masked_crc32c(length)) + p
                    + struct.pack("<I", masked_crc32c(p)))


def test_crc32c_check_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C (Castagnoli) check value


def test_examples_round_trip(tmp_path: Path) -> None:
    records = [
        {"image/id": [b"61654"], "image/ref_exp/label": [3], "neg": [-2, 0, 2**40],
         "image/object/bbox/xmin": [0.25, 0.5], "empty": []},
        {"image/ref_exp/text": [b"click on the search icon"]},
    ]
    path = tmp_path / "a.tfrecord"
    write(path, [example(r) for r in records])
    got = list(read_examples(path))
    assert got[0]["image/id"] == [b"61654"] and got[0]["image/ref_exp/label"] == [3]
    assert got[0]["neg"] == [-2, 0, 2**40] and got[0]["empty"] == []
    assert got[0]["image/object/bbox/xmin"] == [0.25, 0.5]
    assert got[1] == {"image/ref_exp/text": [b"click on the search icon"]}


def test_corrupt_records_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    write(path, [example({"x": [1]})])
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the stored CRC of the payload
    path.write_bytes(bytes(data))
    with pytest.raises(TFRecordError, match="CRC32C"):
        list(read_examples(path))
    assert len(list(read_examples(path, verify=False))) == 1
    path.write_bytes(bytes(data[:-3]))
    with pytest.raises(TFRecordError, match="truncated"):
        list(read_examples(path, verify=False))
