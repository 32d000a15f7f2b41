"""Ranked results held in columns: one set of arrays per run file instead of a dict per result.

A run of 100,000 queries x 100 results read as dicts is ten million result objects (each with
its region dict), several GB, and the garbage collector walks them all. The readers
(predictions.py) store the results whose shape is the common one of the modality instead as:

- ``source`` (int32): the result's source id, interned in ``RunColumns.sources``;
- ``unit`` (int64): its single unit, ``region.turn`` (conversation) or ``region.page`` (pdf),
  0 for an image (whole-image region ``{}``);
- ``score`` (float64): its score, NaN for null (only finite scores are stored);
- ``extra`` (int32): what a result holds beside these, for writing it out again: the atom index
  of a TREC run's atoms file, or the index of its ``(observed_at, holder, atom_id)`` in the
  JSON Lines run's table.

A prediction's answer is then ``{"results": ResultColumns, "latency_s": ...}``: a read-only
sequence over its rows that builds a result dict only when asked (``results[i]``, iteration,
``model_dump`` for the JSON writers); the resolver reads the arrays directly
(resolver.py ``resolve_many``). Results of any other shape (ranges, blocks, boxes, times, code,
int scores, extra keys) keep the dict path, as before.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice, repeat
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from benchreg.core.io import EncodedJSON
from benchreg.families.retrieval.times import time_problem

# the region key of a single-unit result per modality held in columns (None: the region is {})
UNIT_KEY: dict[str, str | None] = {"conversation": "turn", "pdf": "page", "image": None}
UNIT_MIN = {"conversation": 0, "pdf": 1}
INT64_MAX = 2**63 - 1
OPTIONAL = ("observed_at", "holder", "atom_id")
_ABSENT = object()
STR_OR_NULL = frozenset({str, type(None)})
FLOAT_OR_NULL = frozenset({float, type(None)})


class Interner(dict[Any, int]):
    """value -> id, ids given in order of first appearance."""

    def __missing__(self, key: Any) -> int:
        value = self[key] = len(self)
        return value


class RunColumns:
    """The columnar results of one run file (filled by a reader, then :meth:`finish`-ed)."""

    def __init__(self, modality: str, atoms: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.modality = modality
        self.unit_key = UNIT_KEY[modality]
        self.sources: Interner = Interner()
        self.atoms = atoms  # TREC: the result dict (without score) of each atom index
        self._atom_texts: list[bytes | None] | None = None  # json_head's texts, made once
        self._source_texts: list[bytes] | None = None
        self.extras: Interner = Interner()  # JSONL: (observed_at, holder, atom_id) -> index
        self._source, self._unit, self._score, self._extra = (
            array("i"),
            array("q"),
            array("d"),
            array("i"),
        )
        self._none = array("i", [-1])  # -1s to copy from (rows without extras)
        self.source = self.unit = self.score = self.extra = np.zeros(0)
        self.size = 0
        self.has_null_score = False

    def append(
        self, sources: list[int], units: list[int], scores: list[float], extras: list[int] | None
    ) -> tuple[int, int]:
        """Rows for one query (``extras`` None: -1 each); their (start, stop)."""
        start = len(self._source)
        # fromlist: no iterator protocol per item
        self._source.fromlist(sources)
        self._unit.fromlist(units)
        self._score.fromlist(scores)
        if extras is not None:
            self._extra.fromlist(extras)
        else:
            n = len(sources)
            while len(self._none) < n:
                self._none.extend(self._none)
            self._extra.extend(self._none[:n])
        return start, len(self._source)

    def finish(self) -> RunColumns:
        return self.set_arrays(
            np.frombuffer(self._source, dtype=np.int32),
            np.frombuffer(self._unit, dtype=np.int64),
            np.frombuffer(self._score, dtype=np.float64),
            np.frombuffer(self._extra, dtype=np.int32),
        )

    def set_arrays(
        self, source: np.ndarray, unit: np.ndarray, score: np.ndarray, extra: np.ndarray
    ) -> RunColumns:
        """The finished columns (a reader that builds them whole hands them over here)."""
        self.source, self.unit, self.score, self.extra = source, unit, score, extra
        self.size = len(source)
        # NaN stands for a null score (or none): rows are built without that check when absent
        self.has_null_score = bool(np.isnan(score).any())
        self.source_names = list(self.sources)
        self.extra_values = list(self.extras)
        return self

    def item(self, row: int, keys: tuple[str, ...]) -> dict[str, Any]:
        """Row ``row`` as the result dict it was read from (``keys``: the keys it had)."""
        score = float(self.score[row])
        extra = int(self.extra[row])
        if self.atoms is not None:
            return {**self.atoms[extra], "score": score}
        out: dict[str, Any] = {"source_id": self.source_names[int(self.source[row])]}
        key = self.unit_key
        out["region"] = {key: int(self.unit[row])} if key is not None else {}
        if "score" in keys:
            out["score"] = None if score != score else score
        if extra >= 0:
            for name, value in zip(OPTIONAL, self.extra_values[extra], strict=True):
                if name in keys:
                    out[name] = value
        return out

    def items(self, start: int, stop: int, keys: tuple[str, ...]) -> list[dict[str, Any]]:
        """Rows ``start..stop`` as result dicts (:meth:`item` of each, column by column)."""
        scores = self.score[start:stop].tolist()
        extras = self.extra[start:stop].tolist()
        if self.atoms is not None:
            atoms = self.atoms
            return [{**atoms[e], "score": s} for e, s in zip(extras, scores, strict=True)]
        names = self.source_names
        sources = [names[s] for s in self.source[start:stop].tolist()]
        key = self.unit_key
        scored = "score" in keys
        if key is None:
            out = [{"source_id": s, "region": {}} for s in sources]
        elif scored and not self.has_null_score:  # the common row: one dict display each
            units = self.unit[start:stop].tolist()
            out = [
                {"source_id": s, "region": {key: u}, "score": score}
                for s, u, score in zip(sources, units, scores, strict=True)
            ]
            scored = False  # done
        else:
            units = self.unit[start:stop].tolist()
            out = [
                {"source_id": s, "region": {key: u}} for s, u in zip(sources, units, strict=True)
            ]
        if scored:
            for item, score in zip(out, scores, strict=True):
                item["score"] = None if score != score else score
        if len(keys) > 2 + ("score" in keys):
            table = self.extra_values
            for item, extra in zip(out, extras, strict=True):
                for name, value in zip(OPTIONAL, table[extra], strict=True):
                    if name in keys:
                        item[name] = value
        return out

    def json_head(self, start: int, stop: int, keys: tuple[str, ...]) -> EncodedJSON | None:
        """Rows ``start..stop`` as the JSON text orjson writes of :meth:`items`, made from each
        atom's (TREC) or source's (JSON Lines) text, encoded once, and the row's numbers: no
        result dict is built. None for rows of another shape (extras, null scores), which
        take :meth:`items`."""
        if stop <= start:
            return None
        if self.atoms is None and (
            self.unit_key is None or keys != ("source_id", "region", "score") or self.has_null_score
        ):
            return None
        scores = orjson.dumps(self.score[start:stop].tolist())[1:-1].split(b",")
        if self.atoms is not None:
            texts = self._atom_text_list()
            prefixes = [texts[e] for e in self.extra[start:stop].tolist()]
            if None in prefixes:
                return None
            body = b"},".join([p + s for p, s in zip(prefixes, scores, strict=True)])
            return EncodedJSON(b"[" + body + b"}]")
        return self._plain_head(start, stop, scores)

    def _plain_head(self, start: int, stop: int, scores: list[bytes]) -> EncodedJSON:
        """Rows whose result is ``{"source_id", "region": {unit key: unit}, "score"}``."""
        texts = self._source_text_list()
        units = orjson.dumps(self.unit[start:stop].tolist())[1:-1].split(b",")
        sources = [texts[i] for i in self.source[start:stop].tolist()]
        body = b"},".join(
            [p + u + b'},"score":' + s for p, u, s in zip(sources, units, scores, strict=True)]
        )
        return EncodedJSON(b"[" + body + b"}]")

    def _atom_text_list(self) -> list[bytes | None]:
        """Per atom, made once: ``{...atom,"score":`` (None: not a plain dict without a score
        key, or not encodable by orjson)."""
        if self._atom_texts is None:
            texts: list[bytes | None] = []
            for atom in self.atoms or ():
                if type(atom) is not dict or "score" in atom:
                    texts.append(None)
                elif not atom:
                    texts.append(b'{"score":')
                else:
                    try:
                        texts.append(orjson.dumps(atom)[:-1] + b',"score":')
                    except orjson.JSONEncodeError:  # (an integer beyond 64 bits)
                        texts.append(None)
            self._atom_texts = texts
        return self._atom_texts

    def _source_text_list(self) -> list[bytes]:
        """Per source: ``{"source_id":<id>,"region":{"<unit key>":``."""
        if self._source_texts is None:
            region = b',"region":{' + orjson.dumps(self.unit_key) + b":"
            names = self.source_names
            self._source_texts = [b'{"source_id":' + orjson.dumps(n) + region for n in names]
        return self._source_texts


class ResultColumns(Sequence[dict[str, Any]]):
    """The results of one prediction: rows ``start..stop`` of a :class:`RunColumns`, in rank
    order; a result dict is built only when one is asked for."""

    __slots__ = ("keys", "run", "start", "stop")

    def __init__(self, run: RunColumns, start: int, stop: int, keys: tuple[str, ...]) -> None:
        self.run, self.start, self.stop, self.keys = run, start, stop, keys

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:  # a run of rows: built column by column (:meth:`RunColumns.items`)
                lo = self.start + start
                return self.run.items(lo, max(lo, self.start + stop), self.keys)
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("result index out of range")
        return self.run.item(self.start + index, self.keys)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.run.items(self.start, self.stop, self.keys))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ResultColumns | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def json_head(self, limit: int) -> EncodedJSON | None:
        """The first ``limit`` results as JSON text (:meth:`RunColumns.json_head`), or None."""
        return self.run.json_head(self.start, min(self.stop, self.start + limit), self.keys)

    def model_dump(self, mode: str = "json") -> list[dict[str, Any]]:
        """The results as a JSON list (what `benchreg.core.io`'s writers call)."""
        return self.run.items(self.start, self.stop, self.keys)

    def __repr__(self) -> str:
        return f"ResultColumns({len(self)} results)"


def columns_of(answer: Any) -> ResultColumns | None:
    """The columnar results of an answer, or None."""
    if type(answer) is dict:
        results = answer.get("results")
        if type(results) is ResultColumns:
            return results
    return None


class LineRef:
    """A JSON Lines run's line, compared by its decoded value (for duplicate ids) without
    holding that value: it is decoded again only when a repeated id is compared."""

    __slots__ = ("length", "offset", "path")

    def __init__(self, path: Path, offset: int, length: int) -> None:
        self.path, self.offset, self.length = path, offset, length

    def value(self) -> Any:
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            return json.loads(handle.read(self.length))

    def __eq__(self, other: object) -> bool:
        mine = self.value()
        return mine == (other.value() if isinstance(other, LineRef) else other)

    __hash__ = None  # type: ignore[assignment]


class JsonlColumns:
    """Moves the results of JSON Lines run lines into a :class:`RunColumns` when they have the
    modality's common shape, checked column by column (what ``answer.all_common`` accepts,
    restricted to single-unit regions, uniform keys and float or null scores)."""

    def __init__(self, modality: str) -> None:
        self.run = RunColumns(modality)
        self._time_ok: dict[str, bool] = {}
        self._source_id = self.run.sources.__getitem__
        self._extra_id = self.run.extras.__getitem__

    def add(self, results: Any) -> ResultColumns | None:
        """The columnar results of one line's ``results``, or None (keep the dicts)."""
        if type(results) is not list or not results:
            return None
        table = self.run.sources
        known = len(table)
        try:  # dict.get and len raise TypeError on what is not a dict (a result, a region)
            return self._add(results, known)
        except TypeError:  # (or an unhashable source id)
            self._forget(known)
            return None

    def _forget(self, known: int) -> None:
        """Drop the source ids interned after the first ``known`` (a rejected line's)."""
        table = self.run.sources
        for key in list(islice(reversed(table), len(table) - known)):
            del table[key]

    def _add(self, results: list[Any], known: int) -> ResultColumns | None:
        n = len(results)
        sizes = set(map(len, results))
        if len(sizes) != 1:
            return None
        size = sizes.pop()
        ids = self._source_ids(results, known)
        if ids is None:
            return None
        units = self._units(results, n)
        if units is None:
            return None
        keys = ["source_id", "region"]
        scores = _scores(results, n, keys)
        if scores is None:
            return None
        extras = None
        if size > len(keys):  # observed_at, holder, atom_id (and nothing else)
            extras = self._extras(results, n, size, keys)
            if extras is None:
                return None
        elif size != len(keys):
            return None
        start, stop = self.run.append(ids, units, scores, extras)
        return ResultColumns(self.run, start, stop, tuple(keys))

    def _source_ids(self, results: list[Any], known: int) -> list[int] | None:
        """The results' interned source ids; None when a new one is not a non-empty string
        (the ids interned by this line then dropped)."""
        sources = list(map(dict.get, results, repeat("source_id"), repeat(_ABSENT)))
        table = self.run.sources
        ids = list(map(self._source_id, sources))
        if len(table) > known:  # new sources: each must be a non-empty string
            fresh = list(islice(reversed(table), len(table) - known))
            if set(map(type, fresh)) != {str} or "" in fresh:
                self._forget(known)
                return None
        return ids

    def _units(self, results: list[Any], n: int) -> list[int] | None:
        """Each result's single unit (0 for an image's ``{}``), or None for another shape."""
        get = dict.get
        regions = list(map(get, results, repeat("region"), repeat(_ABSENT)))
        unit_key = self.run.unit_key
        if unit_key is None:
            if set(map(type, regions)) != {dict} or set(map(len, regions)) != {0}:
                return None
            return [0] * n
        if set(map(len, regions)) != {1}:
            return None
        units = list(map(get, regions, repeat(unit_key)))
        if set(map(type, units)) != {int}:
            return None
        if min(units) < UNIT_MIN[self.run.modality] or max(units) > INT64_MAX:
            return None
        return units

    def _extras(
        self, results: list[Any], n: int, size: int, keys: list[str]
    ) -> list[int] | None:
        """The interned ``(observed_at, holder, atom_id)`` of each result (absent: null), each
        key given by all results or none (``keys`` gets those given); None otherwise, or for
        a key beside the known ones or an invalid time."""
        optional = []
        for key in OPTIONAL:
            values = list(map(dict.get, results, repeat(key), repeat(_ABSENT)))
            if _ABSENT in values:
                if values.count(_ABSENT) != n:
                    return None
                values = [None] * n
            else:
                keys.append(key)
                if not set(map(type, values)) <= STR_OR_NULL:
                    return None
            optional.append(values)
        if size != len(keys):
            return None  # a key beside the known ones
        if "observed_at" in keys and not self._times_ok(optional[0]):
            return None
        return list(map(self._extra_id, zip(*optional, strict=True)))

    def _times_ok(self, values: list[Any]) -> bool:
        ok = self._time_ok
        for value in set(values) - {None}:
            if value not in ok:
                ok[value] = time_problem(value) is None
            if not ok[value]:
                return False
        return True


def _scores(results: list[Any], n: int, keys: list[str]) -> list[float] | None:
    """The results' scores, NaN for null (all absent: NaN each, else ``keys`` gets "score");
    None unless they are all floats or nulls, the non-null ones finite, or all absent."""
    scores = list(map(dict.get, results, repeat("score"), repeat(_ABSENT)))
    if _ABSENT in scores:
        if scores.count(_ABSENT) != n:
            return None
        return [math.nan] * n
    keys.append("score")
    kinds = set(map(type, scores))
    if not kinds <= FLOAT_OR_NULL:
        return None
    if type(None) in kinds:
        scores = [math.nan if s is None else s for s in scores]
        given = [s for s in scores if s == s]
        if given and not math.isfinite(sum(given)):
            return None
    elif not math.isfinite(sum(scores)):
        return None
    return scores
