"""A small reader of TFRecord files of `tf.train.Example` (uncompressed), without TensorFlow.

A TFRecord file is a sequence of records::

    uint64 length | uint32 masked_crc32c(length bytes) | data[length] | uint32 masked_crc32c(data)

(little-endian). ``data`` is a serialized `tf.train.Example`::

    Example  { Features features = 1; }
    Features { map<string, Feature> feature = 1; }     // map entry: key = 1, value = 2
    Feature  { oneof { BytesList bytes_list = 1; FloatList float_list = 2;
                       Int64List int64_list = 3; } }
    BytesList { repeated bytes value = 1; }  FloatList { repeated float value = 1 [packed]; }
    Int64List { repeated int64 value = 1 [packed]; }

:func:`read_examples` yields each Example as ``{name: list of bytes | float | int}``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

Value = bytes | float | int
Example = dict[str, list[Value]]


class TFRecordError(ValueError):
    pass


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    table, crc = _TABLE, 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(path: Path, *, verify: bool = True) -> Iterator[bytes]:
    """The record payloads of a TFRecord file; ``verify`` checks both CRCs of every record."""
    data = path.read_bytes()
    pos, index = 0, 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise TFRecordError(f"{path}: record {index}: truncated header at byte {pos}")
        header = data[pos : pos + 8]
        (length,) = struct.unpack_from("<Q", data, pos)
        (length_crc,) = struct.unpack_from("<I", data, pos + 8)
        start, end = pos + 12, pos + 12 + length
        if end + 4 > len(data):
            raise TFRecordError(f"{path}: record {index}: truncated (needs {length} bytes)")
        payload = data[start:end]
        if verify:
            (data_crc,) = struct.unpack_from("<I", data, end)
            if masked_crc32c(header) != length_crc or masked_crc32c(payload) != data_crc:
                raise TFRecordError(f"{path}: record {index}: CRC32C mismatch")
        yield payload
        pos, index = end + 4, index + 1


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise TFRecordError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int, bytes | int]]:
    """(field number, wire type, value) of a message: bytes for wire type 2 and the fixed
    types (raw little-endian bytes), int for varints."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: bytes | int
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
            if len(value) != size:
                raise TFRecordError("truncated length-delimited field")
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        else:
            raise TFRecordError(f"unsupported wire type {wire}")
        yield number, wire, value


def _int64(raw: int) -> int:
    return raw - (1 << 64) if raw >= 1 << 63 else raw


def _values(kind: int, body: bytes) -> list[Value]:
    out: list[Value] = []
    for number, wire, value in _fields(body):
        if number != 1:
            continue
        if kind == 1:  # bytes_list
            assert isinstance(value, bytes)
            out.append(value)
        elif kind == 2:  # float_list: packed (wire 2) or one fixed32 (wire 5)
            assert isinstance(value, bytes)
            out.extend(struct.unpack(f"<{len(value) // 4}f", value))
        elif wire == 0:  # int64_list, unpacked
            assert isinstance(value, int)
            out.append(_int64(value))
        else:  # int64_list, packed
            assert isinstance(value, bytes)
            pos = 0
            while pos < len(value):
                raw, pos = _varint(value, pos)
                out.append(_int64(raw))
    return out


def parse_example(payload: bytes) -> Example:
    """A serialized `tf.train.Example` as ``{feature name: values}``."""
    example: Example = {}
    for number, _, features in _fields(payload):
        if number != 1 or not isinstance(features, bytes):
            continue
        for entry_number, _, entry in _fields(features):
            if entry_number != 1 or not isinstance(entry, bytes):
                continue
            key, feature = "", b""
            for n, _, v in _fields(entry):
                if n == 1 and isinstance(v, bytes):
                    key = v.decode("utf-8")
                elif n == 2 and isinstance(v, bytes):
                    feature = v
            values: list[Value] = []
            for kind, _, body in _fields(feature):
                if kind in (1, 2, 3) and isinstance(body, bytes):
                    values = _values(kind, body)
            example[key] = values
    return example


def read_examples(path: Path, *, verify: bool = True) -> Iterator[Example]:
    for payload in read_records(path, verify=verify):
        yield parse_example(payload)
