"""`uibert_refexp`: UIBert RefExp referring expressions on Rico screens (ui_screenshot/SOURCE.md).

- Read from the TFRecord files without TensorFlow (tfrecord.py: CRC32C checked).
- Entries: `uibert-refexp-<split>-<record index>`; the expression verbatim as question; answer
  null (grounding); gold = the referred element's box (`image/ref_exp/label` into
  `image/object/bbox/*`), **normalised to [0, 1]** (no screenshot, so no pixel size: SOURCE.md),
  float32 values written as their shortest decimals; scope.session = the screen `rico-<image/id>`
  (an expression is about one screen: scored within it, as referring-expression grounding is).
  A label outside the candidate boxes, or a box without area, is skipped (counted).
- Sources: one per Rico screen; its corpus file `corpus/ui_screenshot/uibert_refexp/rico-<id>.jsonl`
  holds the screen's view-hierarchy leaves `{bbox, text}` (text = the leaf's text, content
  description, view id and widget class, each once): the text stand-in of the screenshot.
- Split: `dev.tfrecord` -> dev, `test.tfrecord` -> test. No unanswerable entries, time or holder.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.annotations import UIBERT
from benchreg.families.retrieval.importers.common import (
    Imported,
    Importer,
    Origin,
    Row,
    Staging,
    entry,
    need_file,
    source_row,
)
from benchreg.families.retrieval.tfrecord import Example, TFRecordError, read_examples

NAME = "uibert_refexp"
ORIGIN = Origin("UIBert RefExp", "eceafbde7567959899bfb7f8d9e6fd71a52aaa12", "CC BY 4.0",
                UIBERT.name)
BOX = ("xmin", "ymin", "xmax", "ymax")
VH_TEXT = ("text", "description", "id/name", "class/name")


_F32: dict[float, float] = {}  # a screen's boxes repeat their coordinates: each one once


def f32(value: float) -> float:
    """The shortest decimal that reads back as the same float32 (0.5, not 0.5000000238...)."""
    found = _F32.get(value) if value else None  # 0.0 == -0.0: zeros keep their own sign
    if found is None:
        found = float(str(np.float32(value)))
        if value:
            _F32[value] = found
    return found


def boxes(example: Example, prefix: str) -> list[list[float]]:
    columns = [example.get(f"{prefix}/bbox/{k}", []) for k in BOX]
    if len({len(c) for c in columns}) > 1:
        raise ValueError(f"{prefix}: box columns of different lengths")
    return [[f32(float(v)) for v in box] for box in zip(*columns, strict=True)]


def _text(value: bytes | float | int) -> str:
    return value.decode("utf-8", "replace").strip() if isinstance(value, bytes) else str(value)


def screen_rows(example: Example) -> list[Row]:
    """The view-hierarchy leaves of a screen: box and text, content description, view id and
    widget class (half the leaves have neither text nor description)."""
    vh = "image/view_hierarchy"
    leaves = boxes(example, vh)
    columns = [example.get(f"{vh}/{k}") or [b""] * len(leaves) for k in VH_TEXT]
    rows = []
    for box, *parts in zip(leaves, *columns, strict=True):
        texts = [t for t in map(_text, parts) if t]
        rows.append({"bbox": box, "text": " ".join(dict.fromkeys(texts))})
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    return None


def build(args: argparse.Namespace, staging: Staging) -> Imported:
    imported = Imported()
    sources: dict[str, Row] = {}
    for split in ("dev", "test"):
        path = need_file(args.src, f"ref_exp/{split}.tfrecord", "the UIBert folder with "
                         "ref_exp/dev.tfrecord and ref_exp/test.tfrecord")
        try:
            examples = list(read_examples(path))
        except TFRecordError as exc:
            raise BenchregError(str(exc).removeprefix(f"{path}: "), where=path) from None
        for index, example in enumerate(examples):
            where = f"{path}: record {index}"
            try:
                source_id = f"rico-{_text(example['image/id'][0])}"
                if source_id not in sources:
                    sources[source_id] = source_row(
                        source_id, "ui_screenshot", ORIGIN, NAME,
                        path=staging.write_jsonl(f"{source_id}.jsonl", screen_rows(example)),
                        coordinates="normalised [0, 1] (no screenshot: no pixel size)")
                label = int(example["image/ref_exp/label"][0])
                candidates = boxes(example, "image/object")
                question = bytes(example["image/ref_exp/text"][0]).decode("utf-8")  # verbatim
            except (KeyError, IndexError, ValueError, TypeError) as exc:
                raise BenchregError(f"unexpected record ({type(exc).__name__}: {exc})",
                                    where=where) from None
            if not 0 <= label < len(candidates):
                imported.skipped["label outside the candidate boxes"] += 1
                continue
            box = candidates[label]
            if not (box[0] < box[2] and box[1] < box[3]):
                imported.skipped["referred box without area"] += 1
                continue
            gold = [{"source_id": source_id, "region": {"bbox": box}}]
            imported.entries.append(entry(
                f"uibert-refexp-{split}-{index}", "ui_screenshot", question, None, "none", gold,
                ORIGIN, f"{split}:{index}", split, session=source_id,
                scenario="referring-expression"))
    imported.rows = list(sources.values())
    return imported


IMPORTER = Importer(
    NAME, "ui_screenshot", "Import UIBert RefExp (referring expression -> element box).",
    add_arguments, build,
    src_help="the UIBert folder with ref_exp/dev.tfrecord and ref_exp/test.tfrecord "
    "(e.g. ../shared/data/retrieval/ui_screenshot/uibert)",
)
