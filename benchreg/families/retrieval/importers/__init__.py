"""Importers of the third-party retrieval sources into a data root (docs/retrieval.md).

    python -m benchreg import <source> --src <upstream folder> --out <data root> [options]
    python -m benchreg.families.retrieval.importers <source> ...      (the same, directly)

Sources: `mmlongbench_doc` (pdf), `locomo` (conversation), `qvhighlights` (video),
`swebench_lite` (code, `--checkouts`), `codesearchnet` (code), `uibert_refexp`
(ui_screenshot), `coco` (image). Each registers in `benchreg.core.registry.importers` as a
callable taking the arguments after the source name and returning the exit code (0; 2 for a
bad source folder or a corrupt file, after one located error line). The mappings follow each
`../shared/data/retrieval/<modality>/SOURCE.md`; every module's docstring says what it chose
where the SOURCE.md leaves a choice. Staging, merging and counts: common.py.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from benchreg.core import registry
from benchreg.families.retrieval.importers import (
    coco,
    codesearchnet,
    locomo,
    mmlongbench_doc,
    qvhighlights,
    swebench_lite,
    uibert_refexp,
)
from benchreg.families.retrieval.importers.common import Importer

IMPORTERS: dict[str, Importer] = {
    m.IMPORTER.name: m.IMPORTER
    for m in (mmlongbench_doc, locomo, qvhighlights, swebench_lite, codesearchnet,
              uibert_refexp, coco)
}
for _name, _importer in IMPORTERS.items():
    registry.importers.add(_name, _importer)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in IMPORTERS:
        known = ", ".join(IMPORTERS)
        print("usage: python -m benchreg.families.retrieval.importers <source> --src <folder> "
              f"--out <data root> [options]\nsources: {known}\n"
              "`<source> --help` describes one.", file=sys.stderr if args[:1] not in (
                  ["-h"], ["--help"]) else sys.stdout)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    return IMPORTERS[args[0]](args[1:])
