"""`coco`: COCO 2017 captions -> image (the COCO-MINI subset, image/SOURCE.md).

- Entries: `coco-cap-<annotation id>`; the caption verbatim as question; answer null; gold =
  the captioned image, whole (`{source_id: <file_name>, region: {}}`).
- Sources: one per image (`file_name`), no time (`date_captured` is COCO's collection time, not
  the photo's) and no holder; licence, `coco_url` and `flickr_url` kept on the row.
- Corpus: the image's COCO captions as its **text stand-in** (there is no text in a JPEG):
  `corpus/image/coco/<file stem>.jsonl` rows `{id, text, hidden_for: [coco-cap-<id>]}`, each
  caption hidden from its own entry, so an entry is answered from the image's *other*
  captions. `--copy-images` also copies the JPEG (listed under `files`).
- Split: train2017 -> dev, val2017 -> test (both COCO-official).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.annotations import COCO
from benchreg.families.retrieval.importers.common import (
    Imported,
    Importer,
    Origin,
    Row,
    Staging,
    entry,
    field_of,
    load_json,
    need_file,
    source_row,
)

NAME = "coco"
ORIGIN = Origin("MS-COCO 2017 captions (COCO-MINI subset)",
                "644f29e7c1d2eefd9c4412d39bc5b0ee6fd0afd4",
                "CC BY 4.0 (captions); per-image Flickr CC licenses", COCO.name)
PARTS = (("train2017", "dev"), ("val2017", "test"))
STAND_IN = "the image's COCO captions (text stand-in); each hidden from its own entry"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--copy-images", action="store_true",
                        help="also copy each JPEG into the corpus (listed under `files`)")


def build(args: argparse.Namespace, staging: Staging) -> Imported:
    imported = Imported()
    for part, split in PARTS:
        path = need_file(args.src, f"annotations/captions_{part}.json",
                         "the COCO-MINI folder with annotations/captions_*2017.json")
        data = load_json(path)
        where = str(path)
        images = field_of(data, "images", where, list)
        licenses = {lic.get("id"): lic.get("name") for lic in data.get("licenses") or []
                    if isinstance(lic, dict)}
        by_image: dict[int, list[Row]] = {}
        for ann in field_of(data, "annotations", where, list):
            image_id = field_of(ann, "image_id", where, int)
            by_image.setdefault(image_id, []).append(ann)
        files: dict[int, str] = {}
        for image in images:
            image_id = field_of(image, "id", where, int)
            name = field_of(image, "file_name", where, str)
            if Path(name).name != name:
                raise BenchregError(f"file_name {name!r} is not a plain file name", where=where)
            files[image_id] = name
            captions = [{"id": a["id"], "text": field_of(a, "caption", where, str),
                         "hidden_for": [f"coco-cap-{a['id']}"]}
                        for a in by_image.get(image_id, [])]
            extra_files = None
            jpeg = args.src / part / name
            if args.copy_images and jpeg.is_file():
                rel, sha = staging.copy(jpeg, f"images/{name}")
                extra_files = [{"path": rel, "sha256": sha, "role": "image"}]
            imported.rows.append(source_row(
                name, "image", ORIGIN, NAME,
                path=staging.write_jsonl(f"{Path(name).stem}.jsonl", captions),
                coco_image_id=image_id, image_license=licenses.get(image.get("license")),
                coco_url=image.get("coco_url"), flickr_url=image.get("flickr_url"),
                text_stand_in=STAND_IN, files=extra_files))
        for ann in data["annotations"]:
            image_id = ann["image_id"]
            if image_id not in files:
                imported.skipped["caption of an image not listed"] += 1
                continue
            gold = [{"source_id": files[image_id], "region": {}}]
            imported.entries.append(entry(
                f"coco-cap-{field_of(ann, 'id', where, int)}", "image", ann["caption"], None,
                "none", gold, ORIGIN, str(ann["id"]), split, scenario=part))
    imported.lines.append(f"corpus: {STAND_IN}")
    return imported


IMPORTER = Importer(
    NAME, "image", "Import COCO 2017 captions (COCO-MINI: caption -> image).",
    add_arguments, build,
    src_help="the COCO-MINI folder with annotations/captions_{train,val}2017.json "
    "(e.g. ../shared/data/retrieval/image/coco-mini)",
)
