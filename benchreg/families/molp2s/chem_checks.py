"""RDKit parse checks used by the loader (lazy RDKit import, quiet logs)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any


@cache
def _chem() -> Any:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    return Chem


def smiles_parses(smiles: str) -> bool:
    return _chem().MolFromSmiles(smiles) is not None


def masked_smiles_problem(masked: str, mask: Mapping[str, Any]) -> str | None:
    """Why a masked SMILES is unusable, or None when it is fine.

    The mask is either an RDKit dummy atom (`*`, `[*]`, `[1*]`, ...) or a textual token named in
    the mask metadata (`mask.token`), which is replaced by `[*]` before parsing.
    """
    token = mask.get("token")
    text = masked
    if isinstance(token, str) and token and token not in ("*", "[*]") and token in masked:
        text = masked.replace(token, "[*]")
    mol = _chem().MolFromSmiles(text)
    if mol is None:
        hint = f" (mask token {token!r} replaced by [*])" if text != masked else ""
        return f"masked SMILES {masked!r} does not parse in RDKit{hint}"
    if not any(atom.GetAtomicNum() == 0 for atom in mol.GetAtoms()):
        return (
            f"masked SMILES {masked!r} has no mask: no dummy atom and no `mask.token` found in it"
        )
    return None
