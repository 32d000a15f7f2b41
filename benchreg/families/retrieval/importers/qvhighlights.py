"""`qvhighlights`: QVHighlights moment retrieval (video/SOURCE.md).

- Entries: `qvh-<qid>`, the query verbatim as question, answer null (moment retrieval), gold =
  one `{t_start, t_end}` per relevant window (seconds from the clip start, as floats; repeats
  removed and counted; a window without length dropped and counted); scope.session = the clip
  (`vid`): a query is written for a moment inside one 150-s clip, so it is scored within it,
  as moment retrieval is.
- Sources: one per clip (`vid`), without a corpus file: the clips are YouTube videos that are
  not here and no transcript exists for val/test. The BM25 baseline therefore stops with one
  line; score your own system's predictions (docs/retrieval.md).
- Split: `highlight_val_release.jsonl` -> dev, `highlight_test_with_gt.jsonl` -> test.
- No time, no holder.
"""

from __future__ import annotations

import argparse

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.annotations import QVH
from benchreg.families.retrieval.importers.common import (
    Imported,
    Importer,
    Origin,
    Row,
    Staging,
    dedupe,
    entry,
    field_of,
    load_jsonl,
    need_file,
    source_row,
)

NAME = "qvhighlights"
ORIGIN = Origin("QVHighlights", "b7e553ac3b0c898ee6b85e03ee507c064eab89ca", "CC BY-NC-SA 4.0",
                QVH.name)
FILES = (("data/highlight_val_release.jsonl", "dev"),
         ("data/highlight_test_with_gt.jsonl", "test"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    return None


def build(args: argparse.Namespace, staging: Staging) -> Imported:
    imported = Imported()
    sources: dict[str, Row] = {}
    for rel, split in FILES:
        path = need_file(args.src, rel, "the QVHighlights data folder's parent (moment_detr "
                         "layout: data/highlight_*.jsonl)")
        for where, rec in load_jsonl(path):
            qid = field_of(rec, "qid", where, int)
            vid = field_of(rec, "vid", where, str)
            duration = rec.get("duration")
            sources.setdefault(vid, source_row(vid, "video", ORIGIN, NAME, duration=duration))
            windows = field_of(rec, "relevant_windows", where, list)
            gold: list[Row] = []
            for window in windows:
                if (not isinstance(window, list) or len(window) != 2
                        or not all(isinstance(v, int | float) for v in window)):
                    raise BenchregError(f"a relevant window is [start, end], got {window!r}",
                                        where=where)
                start, end = float(window[0]), float(window[1])
                if not 0 <= start < end:
                    imported.notes["windows without length dropped"] += 1
                    continue
                gold.append({"source_id": vid, "region": {"t_start": start, "t_end": end}})
            gold = dedupe(gold, imported.notes, "repeated windows removed")
            if not gold:
                imported.skipped["query without a window of positive length"] += 1
                continue
            imported.entries.append(entry(
                f"qvh-{qid}", "video", field_of(rec, "query", where, str), None, "none", gold,
                ORIGIN, str(qid), split, session=vid, scenario="moment-retrieval"))
    imported.rows = list(sources.values())
    imported.lines.append("corpus: none (the clips are not here): the BM25 baseline cannot "
                          "run on video; score your own system's predictions")
    return imported


IMPORTER = Importer(
    NAME, "video", "Import QVHighlights (moment retrieval, val -> dev, test -> test).",
    add_arguments, build,
    src_help="the folder holding data/highlight_val_release.jsonl and "
    "data/highlight_test_with_gt.jsonl (e.g. ../shared/data/retrieval/video/qvhighlights)",
)
