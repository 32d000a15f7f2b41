"""RDKit parse checks used by the loader (lazy RDKit import, quiet logs)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, lru_cache
from typing import Any


@cache
def _chem() -> Any:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    return Chem


def smiles_parses(smiles: str) -> bool:
    return _smiles_info(smiles)[0]


@lru_cache(maxsize=1 << 18)
def _smiles_info(smiles: str) -> tuple[bool, bool]:
    """(parses, holds a dummy atom): RDKit parses each distinct SMILES once per process."""
    mol = _chem().MolFromSmiles(smiles)
    if mol is None:
        return False, False
    return True, any(atom.GetAtomicNum() == 0 for atom in mol.GetAtoms())


def masked_smiles_problem(masked: str, mask: Mapping[str, Any]) -> str | None:
    """Why a masked SMILES is unusable, or None when it is fine.

    The mask is either an RDKit dummy atom (`*`, `[*]`, `[1*]`, ...) or a textual token named in
    the mask metadata (`mask.token`, or any other string value of `mask` found in the SMILES),
    which is replaced by `[*]` before parsing.
    """
    if _has_dummy_atom(masked):
        return None
    tokens = [mask.get("token"), *(v for k, v in mask.items() if k != "token")]
    for token in tokens:
        usable = isinstance(token, str) and token and token in masked
        if usable and _has_dummy_atom(masked.replace(token, "[*]")):
            return None
    if not smiles_parses(masked):
        named = f"; mask token {mask.get('token')!r} not found in it" if mask.get("token") else ""
        return f"masked SMILES {masked!r} does not parse in RDKit{named}"
    return f"masked SMILES {masked!r} has no mask: no dummy atom and no `mask.token` found in it"


def _has_dummy_atom(smiles: str) -> bool:
    return _smiles_info(smiles)[1]
