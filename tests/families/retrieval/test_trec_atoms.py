"""The TREC reader's docno -> atom look-up (trec._AtomIndex) against a dict of the atom ids:
random ids, ids that share a hash, docnos longer than every id, missing and non-ASCII ids."""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchreg.families.retrieval import trec


def _docno_rows(docnos: list[bytes]) -> np.ndarray:
    width = max(len(d) for d in docnos)
    return np.array(docnos, dtype=f"S{width}").view(np.uint8).reshape(len(docnos), width)


def _expected(atom_ids: list[str], docnos: list[bytes]) -> list[int]:
    by_id = {a: i for i, a in enumerate(atom_ids)}
    return [by_id.get(d.decode("ascii"), -1) for d in docnos]


@pytest.mark.parametrize("weak_hash", [False, True])
def test_docnos_find_their_atoms_as_a_dict_does(
    monkeypatch: pytest.MonkeyPatch, weak_hash: bool
) -> None:
    if weak_hash:  # every id in a few hash values: long probe runs, equal hashes everywhere
        monkeypatch.setattr(
            trec, "_hash_words", lambda words: (words[:, 0] & np.uint64(3)).astype(np.uint64)
        )
    rng = random.Random(7)
    alphabet = "abcdefghij-0123456789"
    atom_ids = sorted(
        {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 20))) for _ in range(3000)}
    )
    atom_ids += ["página-1", "doc\x00x"]  # not ASCII / a NUL: never a plain docno's match
    index = trec._AtomIndex(atom_ids)
    docnos = [rng.choice(atom_ids[:-2]).encode() for _ in range(4000)]
    docnos += [b"x" * 30, b"zz-not-an-id", atom_ids[5].encode() + b"0", atom_ids[9][:-1].encode()]
    found = index.find(_docno_rows(docnos)).tolist()
    assert found == _expected(atom_ids, docnos)
    assert sum(f < 0 for f in found) >= 2


def test_an_empty_index_finds_nothing() -> None:
    assert trec._AtomIndex([]).find(_docno_rows([b"a", b"b"])).tolist() == [-1, -1]
