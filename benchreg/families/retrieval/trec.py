"""A TREC run (``qid Q0 docno rank score tag``) read as columns, a chunk at a time.

What is read is exactly what ``read_text(run).splitlines()`` and ``line.split()`` per line give
(the reader as it was): a line is malformed unless it has 6 fields and a float score; blank
lines are skipped; line numbers count every line. A chunk of plain ASCII text whose only line
break is ``\\n`` (no ``\\r``, ``\\v``, ``\\f``, ``\\x1c-\\x1f``: `str` would split lines or fields
there) and whose non-blank lines all hold 6 fields is read with numpy (field edges from one
diff, fields per line counted); any other chunk is read line by line as before. A chunk's
queries are grouped from the runs of equal qids, and docnos are found by a hash of their 8-byte
words, then compared word for word.

Results are then ordered as trec_eval does (score descending, ties by docno descending: one
``np.lexsort``); a query whose lines name a docno the atoms file lacks, carry a non-finite score,
or an atom whose result is not of the modality's common shape is built as before, with result
dicts; the others are columns (columns.py).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import read_text
from benchreg.core.load import ordered_map
from benchreg.core.predictions import PredictionCollector
from benchreg.core.reader import index_by_id, index_lines, json_lines, read_records
from benchreg.core.types import Prediction, Status
from benchreg.families.retrieval.answer import all_common
from benchreg.families.retrieval.columns import (
    INT64_MAX,
    UNIT_KEY,
    UNIT_MIN,
    Interner,
    ResultColumns,
    RunColumns,
)

CHUNK_BYTES = 1 << 22
FIELDS = 6
_BREAKS = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")  # str.splitlines, beside \n
# control characters but tab and newline -> \x00 (\x00 itself stays)
_CONTROL = bytes.maketrans(bytes(c for c in range(32) if c not in (9, 10)), bytes(30))
TREC_KEYS = ("source_id", "region", "score", "observed_at", "holder", "atom_id")


@dataclass
class TrecLines:
    """Every well-formed line: its query (index into ``qids``), atom (-1: not in the atoms
    file, docno in ``missing``) and score."""

    qids: Interner = field(default_factory=Interner)  # qid (bytes) -> index
    first_line: list[int] = field(default_factory=list)  # per query: its first line number
    q: array = field(default_factory=lambda: array("i"))
    atom: array = field(default_factory=lambda: array("i"))
    score: array = field(default_factory=lambda: array("d"))
    missing: dict[int, str] = field(default_factory=dict)  # line index -> docno

    def add(
        self,
        qids: Sequence[bytes],
        atoms: list[int],
        scores: Sequence[float],
        numbers: Sequence[int],
        docnos: Sequence[Any],
    ) -> None:
        """Lines of one chunk (``numbers``: their line numbers)."""
        known = len(self.qids)
        ids = list(map(self.qids.__getitem__, qids))
        if len(self.qids) > known:  # new queries: the line of the first mention of each
            arr = np.asarray(ids, dtype=np.int64)
            fresh = np.flatnonzero(arr >= known)
            _, first = np.unique(arr[fresh], return_index=True)  # sorted by id: by appearance
            self.first_line.extend(numbers[i] for i in fresh[first].tolist())
        if -1 in atoms:
            base = len(self.atom)
            for i, a in enumerate(atoms):
                if a < 0:
                    d = docnos[i]
                    self.missing[base + i] = d.decode() if isinstance(d, bytes) else d
        self.q.extend(ids)
        self.atom.extend(atoms)
        self.score.extend(scores)


def read_atoms(path: Path, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``atom_id -> {key: atom[key] for key in keys if key in atom}`` of an atoms file: what
    ``index_by_id(read_records(path), "atom_id", what="atom")`` holds. A line that is no atom
    with an id of its own is named by the core reader's :func:`index_lines` (which raises its
    located error); a file of another suffix that is no JSON Lines is read as a JSON list."""
    out: dict[str, dict[str, Any]] = {}
    try:
        for _, atom, _ in json_lines(path):
            atom_id = atom.get("atom_id") if type(atom) is dict else None
            if type(atom_id) is not str or not atom_id or atom_id in out:
                index_lines(path, "atom_id", what="atom")  # raises the located error
                raise AssertionError(f"{path}: index_lines accepted {atom_id!r}")
            out[atom_id] = {key: atom[key] for key in keys if key in atom}
    except BenchregError:
        if path.suffix == ".jsonl":
            raise
        records = index_by_id(read_records(path), "atom_id", what="atom")
        return {k: {key: r.data[key] for key in keys if key in r.data} for k, r in records.items()}
    return out


def read_lines(run: Path, atom_ids: list[str], collector: PredictionCollector) -> TrecLines:
    """The run's lines, a chunk at a time: a chunk :func:`_parse_chunk` reads with numpy (two
    chunks at once: :func:`benchreg.core.load.ordered_map`) is added whole, any other line by
    line (:func:`_slow_chunk`); queries interned and line numbers counted in file order."""
    atoms = _AtomIndex(atom_ids)
    out = TrecLines()
    number = 0
    chunks = _chunks(run)
    for data, parsed in ordered_map(lambda data: (data, _parse_chunk(data, atoms)), chunks):
        if parsed is None:
            _slow_chunk(run, data, number, atoms.by_str, out, collector)
            number += _line_count(data)
        else:
            _add_parsed(parsed, number, out)
            number += len(parsed.score)  # plain ASCII, one line per "\n", ending in one
    return out


def _chunks(run: Path) -> Iterator[bytes]:
    """The file's bytes, about :data:`CHUNK_BYTES` at a time, each ending at a line end."""
    try:
        handle = run.open("rb")
    except OSError:
        read_text(run)  # raises the located error
        raise
    with handle:
        rest = b""
        while chunk := handle.read(CHUNK_BYTES):
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
            if data:
                yield data
        if rest:
            yield rest


def _line_count(data: bytes) -> int:
    if data.isascii() and not any(b in data for b in _BREAKS):
        return data.count(b"\n") + (not data.endswith(b"\n"))
    return len(data.decode("utf-8").splitlines())


_NUMBER = np.zeros(256, dtype=bool)  # the characters of a plain decimal score
_NUMBER[list(b"0123456789.eE+-")] = True


@dataclass(frozen=True, slots=True)
class _Parsed:
    """What :func:`_parse_chunk` read from a chunk: per line its query (an index into
    ``unique``, the chunk's distinct qids; ``first``: each one's first line in the chunk), atom
    (-1: missing, its docno in ``missing``) and score."""

    unique: np.ndarray
    inverse: np.ndarray
    first: np.ndarray
    atom: np.ndarray
    score: np.ndarray
    missing: list[tuple[int, str]]


def _parse_chunk(data: bytes, atoms: _AtomIndex) -> _Parsed | None:
    """A chunk of whole lines read with numpy, when it is plain ASCII without control
    characters but tab and newline, ends in a newline and every line holds exactly 6 fields
    (line i's 6th field starts before its newline, the next line's 1st after it); scores must
    be plain decimals (digits, ``.``, ``e``, signs), parsed by ``float`` semantics (numpy's
    cast of bytes); anything else: None (the chunk is read line by line)."""
    if not data.endswith(b"\n") or not data.isascii() or b"\x00" in data.translate(_CONTROL):
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    space = np.empty(len(buf) + 1, dtype=bool)
    space[0] = True  # a space before the first byte
    # no control character but tab and newline: the bytes up to 32 are exactly the spaces
    np.less_equal(buf, 32, out=space[1:])
    # where a field starts or ends (a space starts): they alternate, from a start to an end
    # (the data ends in a newline)
    changes = np.flatnonzero(space[1:] != space[:-1])
    starts, ends = changes[0::2].copy(), changes[1::2].copy()
    breaks = np.flatnonzero(buf == 10)
    n_lines = len(breaks)
    if len(starts) != FIELDS * n_lines:
        return None
    if np.any(starts[FIELDS - 1 :: FIELDS] > breaks) or np.any(
        starts[FIELDS::FIELDS] < breaks[:-1]
    ):
        return None
    width = int((ends - starts).max()) if len(starts) else 1
    buf = np.concatenate([buf, np.zeros(width, dtype=np.uint8)])  # every field fits before the end
    score_text = _field(buf, starts[4::FIELDS], ends[4::FIELDS])
    if not np.all(_NUMBER[score_text] | (score_text == 0)):
        return None
    try:
        scores = score_text.view(f"S{score_text.shape[1]}").reshape(-1).astype(np.float64)
    except ValueError:
        return None
    qids = _field(buf, starts[0::FIELDS], ends[0::FIELDS])
    qid_text = qids.view(f"S{qids.shape[1]}").reshape(-1)
    unique, inverse, first = _group(qids, qid_text)
    docno = _field(buf, starts[2::FIELDS], ends[2::FIELDS])
    atom = atoms.find(docno)
    missing = [
        (i, bytes(docno[i]).rstrip(b"\x00").decode()) for i in np.flatnonzero(atom < 0).tolist()
    ]
    return _Parsed(unique, inverse, first, atom, scores, missing)


def _add_parsed(parsed: _Parsed, number: int, out: TrecLines) -> None:
    """The lines of a parsed chunk (its first line: ``number + 1``) added to ``out``: the
    chunk's queries interned in order of first appearance."""
    unique, inverse, first = parsed.unique, parsed.inverse, parsed.first
    by_appearance = np.argsort(first, kind="stable")
    known = len(out.qids)
    ids = np.empty(len(unique), dtype=np.int64)
    for u in by_appearance.tolist():
        ids[u] = out.qids[bytes(unique[u])]
    q = ids[inverse.reshape(-1)]
    if len(out.qids) > known:
        new = np.flatnonzero(ids >= known)
        numbers = number + 1 + first[new]
        out.first_line.extend(numbers[np.argsort(ids[new])].tolist())
    base = len(out.atom)
    for i, docno in parsed.missing:
        out.missing[base + i] = docno
    out.q.frombytes(q.astype(np.int32).tobytes())
    out.atom.frombytes(parsed.atom.astype(np.int32).tobytes())
    out.score.frombytes(parsed.score.tobytes())


def _group(rows: np.ndarray, text: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(text, return_inverse=True)`` and the index of each unique value's first
    row, found from the runs of equal rows (a run file holds each query's lines together):
    only the first row of each run is sorted."""
    n = len(rows)
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    heads = np.flatnonzero(change)
    unique, at_head = np.unique(text[heads], return_inverse=True)
    inverse = at_head.reshape(-1)[np.cumsum(change) - 1]
    _, first_head = np.unique(at_head, return_index=True)
    return unique, inverse, heads[first_head]


def _field(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The bytes ``buf[starts[i]:ends[i]]`` as rows of a zero-padded (n, width) uint8 array
    (``buf`` is padded with as many bytes as the longest field: a row read past its field's end
    stays inside it)."""
    lengths = ends - starts
    width = int(lengths.max()) if len(starts) else 1
    rows = np.lib.stride_tricks.sliding_window_view(buf, width)[starts]
    rows[np.arange(width)[None, :] >= lengths[:, None]] = 0
    return rows


_PRIME = np.uint64(1099511628211)


def _rows_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row i of ``a`` equals row i of ``b`` (equal-shaped 2-d arrays), a column at a time."""
    equal = a[:, 0] == b[:, 0]
    for j in range(1, a.shape[1]):
        equal &= a[:, j] == b[:, j]
    return equal


def _hash_words(words: np.ndarray) -> np.ndarray:
    """A 64-bit polynomial hash of each row of an (n, width / 8) array of 8-byte words (the
    words as its digits)."""
    h = np.zeros(len(words), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h = h * _PRIME + words[:, j]
    return h


class _AtomIndex:
    """docno bytes -> atom index for whole arrays of docnos: an open-addressing hash table of
    the ASCII atom ids (64-bit hashes of their 8-byte words, linear probing, at most half
    full), probed for all docnos at once; a slot's atom is taken only when its id equals the
    docno byte for byte, so a hash shared by two ids or with a docno costs one more probe."""

    def __init__(self, atom_ids: list[str]) -> None:
        self.by_str = {a: i for i, a in enumerate(atom_ids)}
        plain = [i for i, a in enumerate(atom_ids) if a.isascii() and "\x00" not in a]
        longest = max((len(atom_ids[i]) for i in plain), default=1)
        self.width = -(-longest // 8) * 8  # zero-padded to whole 8-byte words
        texts = np.array([atom_ids[i].encode() for i in plain], dtype=f"S{self.width}")
        self.words = np.ascontiguousarray(texts.view(np.uint8).reshape(len(plain), self.width))
        self.words = self.words.view(np.uint64)
        self.hashes = _hash_words(self.words)
        self.index = np.asarray(plain, dtype=np.int64)
        bits = max(4, (2 * len(plain)).bit_length())
        self.mask, self.shift = np.uint64((1 << bits) - 1), np.uint64(64 - bits)
        self.table = np.full(1 << bits, -1, dtype=np.int64)  # slot -> position in plain
        home = self._home(self.hashes)
        todo, probe = np.arange(len(plain)), np.uint64(0)
        with np.errstate(over="ignore"):
            while len(todo):
                slot = (home[todo] + probe) & self.mask
                free = np.flatnonzero(self.table[slot] < 0)
                taken, first = np.unique(slot[free], return_index=True)
                self.table[taken] = todo[free[first]]  # one id per free slot this round
                placed = np.zeros(len(todo), dtype=bool)
                placed[free[first]] = True
                todo = todo[~placed]  # the others probe the next slot
                probe += np.uint64(1)

    def find(self, docnos: np.ndarray) -> np.ndarray:
        n, width = docnos.shape
        if not len(self.hashes) or not n:
            return np.full(n, -1, dtype=np.int64)
        if width > self.width:
            fits = ~docnos[:, self.width :].any(axis=1)  # longer than every atom id: missing
            docnos = docnos[:, : self.width]
        else:
            fits = None
            docnos = np.pad(docnos, ((0, 0), (0, self.width - width)))
        words = np.ascontiguousarray(docnos).view(np.uint64)  # compared 8 bytes at a time
        hashes = _hash_words(words)
        home = self._home(hashes)
        # the first probe, for every docno at once (most find their id there)
        held = self.table[home]
        filled = held >= 0  # an empty slot: the docno is no atom id
        at = np.where(filled, held, 0)
        found = filled & (self.hashes[at] == hashes) & _rows_equal(self.words[at], words)
        if fits is not None:
            found &= fits
        out = np.where(found, self.index[at], -1)
        todo = np.flatnonzero(filled & ~found if fits is None else filled & ~found & fits)
        hashes, home, probe = hashes[todo], home[todo], np.uint64(1)
        with np.errstate(over="ignore"):
            while len(todo):  # a slot held by another id: the next ones
                held = self.table[(home + probe) & self.mask]
                filled_at = np.flatnonzero(held >= 0)
                todo, hashes, home, held = (
                    todo[filled_at],
                    hashes[filled_at],
                    home[filled_at],
                    held[filled_at],
                )
                same = (self.hashes[held] == hashes) & _rows_equal(self.words[held], words[todo])
                out[todo[same]] = self.index[held[same]]
                todo, hashes, home = todo[~same], hashes[~same], home[~same]
                probe += np.uint64(1)
        return out

    def _home(self, hashes: np.ndarray) -> np.ndarray:
        """Each hash's first slot: its bits mixed (splitmix64's finalizer), the top ones taken
        (the polynomial hash's low bits hardly vary over ids of one pattern)."""
        with np.errstate(over="ignore"):
            x = hashes ^ (hashes >> np.uint64(30))
            x = x * np.uint64(0xBF58476D1CE4E5B9)
            x = x ^ (x >> np.uint64(27))
            x = x * np.uint64(0x94D049BB133111EB)
            return (x ^ (x >> np.uint64(31))) >> self.shift


def _slow_chunk(
    run: Path,
    data: bytes,
    number: int,
    by_str: Mapping[str, int],
    out: TrecLines,
    collector: PredictionCollector,
) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        read_text(run)  # raises the located error
        raise
    qids, atoms, scores, numbers, docnos = [], [], [], [], []
    for offset, line in enumerate(text.splitlines(), start=number + 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            qid, docno, score = parts[0], parts[2], float(parts[4])
            if len(parts) != FIELDS:
                raise ValueError
        except (IndexError, ValueError):
            collector.add_malformed(at(run, offset))
            continue
        qids.append(qid.encode())
        atoms.append(by_str.get(docno, -1))
        scores.append(score)
        numbers.append(offset)
        docnos.append(docno)
    out.add(qids, atoms, scores, numbers, docnos)


def _atom_columns(
    results: Sequence[Mapping[str, Any]], modality: str | None, run: RunColumns | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per atom: whether its result has the modality's common single-unit shape (and valid
    values, as the answer schema checks them), its interned source and its unit."""
    n = len(results)
    ok = np.zeros(n, dtype=bool)
    source = np.full(n, -1, dtype=np.int32)
    unit = np.zeros(n, dtype=np.int64)
    if modality is None or run is None:
        return ok, source, unit
    key, least = UNIT_KEY[modality], UNIT_MIN.get(modality, 0)
    step = 1024
    for lo in range(0, n, step):
        part = results[lo : lo + step]
        if all_common(modality, part) and _columns_of_part(
            part, key, least, run, lo, ok, source, unit
        ):
            continue
        for i, item in enumerate(part):  # one by one
            if not all_common(modality, [item]):
                continue
            region = item["region"]
            if key is None:
                value = 0
            elif len(region) != 1 or type(region.get(key)) is not int:
                continue
            else:
                value = region[key]
                if not least <= value <= INT64_MAX:
                    continue
            ok[lo + i] = True
            source[lo + i] = run.sources[item["source_id"]]
            unit[lo + i] = value
    return ok, source, unit


def _columns_of_part(
    part: Sequence[Mapping[str, Any]],
    key: str | None,
    least: int,
    run: RunColumns,
    lo: int,
    ok: np.ndarray,
    source: np.ndarray,
    unit: np.ndarray,
) -> bool:
    """:func:`_atom_columns` of atoms that all passed the answer schema's common check, column
    by column; False when some region is not a single unit (then one by one)."""
    regions = [item["region"] for item in part]
    hi = lo + len(part)
    if key is None:
        values: list[int] = [0] * len(part)
    else:
        if set(map(len, regions)) != {1}:
            return False
        values = [region.get(key) for region in regions]
        if set(map(type, values)) != {int} or min(values) < least or max(values) > INT64_MAX:
            return False
    ids = run.sources
    source[lo:hi] = [ids[item["source_id"]] for item in part]
    unit[lo:hi] = values
    ok[lo:hi] = True
    return True


def predictions(
    lines: TrecLines, results: Mapping[str, Mapping[str, Any]], modality: str | None
) -> Iterator[tuple[str, int, Prediction]]:
    """(qid, first line number, prediction) per query, in order of first appearance."""
    atom_ids = list(results)
    table = list(results.values())
    run = RunColumns(modality, atoms=table) if modality is not None else None
    ok, atom_source, atom_unit = _atom_columns(table, modality, run)
    q = np.frombuffer(lines.q, dtype=np.int32)
    atom = np.frombuffer(lines.atom, dtype=np.int32)
    score = np.frombuffer(lines.score, dtype=np.float64)
    n_queries = len(lines.qids)
    by_name = sorted(range(len(atom_ids)), key=atom_ids.__getitem__)
    rank = np.empty(len(atom_ids) + 1, dtype=np.int64)  # the last slot: a missing docno
    rank[by_name] = np.arange(len(atom_ids))
    rank[-1] = -1
    known = atom >= 0
    good_line = known & np.isfinite(score)
    good_line[known] &= ok[atom[known]]
    bad = np.bincount(q[~good_line], minlength=n_queries) > 0
    order = _trec_order(q, score, rank[atom])
    counts = np.bincount(q, minlength=n_queries)
    stops = np.cumsum(counts)
    starts = stops - counts
    if run is not None:
        sorted_atoms = atom[order] if order is not None else atom
        safe = np.where(sorted_atoms >= 0, sorted_atoms, 0)
        run.set_arrays(
            atom_source[safe],
            atom_unit[safe],
            score[order] if order is not None else score,
            sorted_atoms,
        )
    qids = [k.decode() for k in lines.qids]
    bad_list, starts_list, stops_list = bad.tolist(), starts.tolist(), stops.tolist()
    for i, qid in enumerate(qids):
        start, stop = starts_list[i], stops_list[i]
        if bad_list[i] or run is None:
            rows = order[start:stop].tolist() if order is not None else list(range(start, stop))
            scored = [(float(score[r]), lines.missing.get(r) or atom_ids[atom[r]]) for r in rows]
            scored.sort(key=lambda p: (p[0], p[1]), reverse=True)
            prediction = _trec_prediction(qid, scored, results)
        else:
            held = ResultColumns(run, start, stop, TREC_KEYS)
            prediction = Prediction(qid, answer={"results": held, "latency_s": None})
        yield qid, lines.first_line[i], prediction


def _trec_order(q: np.ndarray, score: np.ndarray, rank: np.ndarray) -> np.ndarray | None:
    """The lines in query order (queries by first appearance), then score descending, ties
    by docno descending; None when they are in that order already (a run file as trec_eval
    writes it: one stable lexsort otherwise)."""
    if len(q) < 2:
        return None
    step = q[1:] - q[:-1]
    same = step == 0
    with np.errstate(invalid="ignore"):
        ordered = (step >= 0).all() and bool(
            np.all(
                ~same
                | (score[1:] < score[:-1])
                | ((score[1:] == score[:-1]) & (rank[1:] < rank[:-1]))
            )
        )
    if ordered:
        return None
    return np.lexsort((-rank, -score, q))


def _trec_prediction(
    qid: str, scored: list[tuple[float, str]], atoms: Mapping[str, Mapping[str, Any]]
) -> Prediction:
    results = []
    for score, docno in scored:
        atom = atoms.get(docno)
        if atom is None:
            return Prediction(qid, status=Status.INVALID, detail=f"docno {docno!r} not in atoms")
        results.append({**atom, "score": score})
    return Prediction(qid, answer={"results": results, "latency_s": None})
