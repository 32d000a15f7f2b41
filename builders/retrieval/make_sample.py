"""Regenerate the embedded retrieval sample (invented corpus + sets for all six modalities).

Run from the project root:

    python -m builders.retrieval.make_sample            # rewrite the embedded sample
    python -m builders.retrieval.make_sample --check    # verify it is reproduced exactly

Per modality: 4 sources (image: one per caption) of two holders (`alice`, `bob`), two observed
on 2024-01-10 and two on 2024-03-10; 12 dev entries (3 unanswerable = 25%) and 3 test entries
(1 unanswerable); most entries have `as_of` and `scope.holder`.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from builders.retrieval.content import FACTS, FILLER, UNANSWERABLE

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = ROOT / "benchreg" / "families" / "retrieval" / "sample"
DATASET, REVISION = "benchreg-sample-retrieval", "2024.1"
LICENSE = "CC0-1.0 (written for benchreg)"
ANNOTATION = "hand-written for the benchreg embedded sample (demonstration, not a benchmark)"
OLD, NEW = "2024-01-10T09:00:00+00:00", "2024-03-10T09:00:00+00:00"
EARLY_AS_OF, LATE_AS_OF = "2024-02-01T00:00:00+00:00", "2024-06-01T00:00:00+00:00"
N_SOURCES, SLOTS, DEV_FACTS = 4, 3, 9


def holder_of(src: int) -> str:
    return "alice" if src % 2 == 0 else "bob"


def observed_of(src: int) -> str:
    return OLD if src % 4 < 2 else NEW


def _pdf(src: int, facts: dict[int, str]) -> tuple[str, str, dict[int, dict[str, Any]]]:
    pages, gold = [], {}
    for slot in range(SLOTS):
        text = facts.get(slot, FILLER["pdf"] + f" Page {slot + 1}.")
        pages.append(f"{text}\n\n{FILLER['pdf']}")
        gold[slot] = {"page": slot + 1} if slot % 2 == 0 else {"page": slot + 1, "block": 0}
    return f"pdf/report_{src}.txt", "\f".join(pages) + "\n", gold


def _conversation(src: int, facts: dict[int, str]) -> tuple[str, str, dict[int, dict]]:
    rows, gold = [], {}
    for turn in range(1, 2 * SLOTS + 1):
        slot = (turn - 1) // 2
        speaker = holder_of(src) if turn % 2 else "friend"
        text = facts.get(slot, FILLER["conversation"]) if turn % 2 else FILLER["conversation"]
        rows.append({"turn": turn, "speaker": speaker, "text": text})
        if turn % 2:
            gold[slot] = {"turn": turn}
    return f"conversation/session_{src}.jsonl", _jsonl(rows), gold


def _code(src: int, facts: dict[int, str]) -> tuple[str, str, dict[int, dict]]:
    path = f"toolkit/mod{src}.py"
    lines, gold = ["import math", "", ""], {}
    for slot in range(SLOTS):
        body = facts.get(slot, f"def helper_{src}_{slot}():\n    return math.pi")
        start = len(lines) + 1
        lines += [*body.splitlines(), "", ""]
        name = body.split("(")[0].removeprefix("def ")
        returns = start + body.splitlines().index(
            next(x for x in body.splitlines() if x.strip().startswith("return"))
        )
        gold[slot] = (
            {"path": path, "symbol": name} if slot % 2 == 0 else {"path": path, "line": returns}
        )
    bundle = json.dumps({path: "\n".join(lines).rstrip() + "\n"}, indent=1) + "\n"
    return f"code/repo_{src}.json", bundle, gold


def _video(src: int, facts: dict[int, str]) -> tuple[str, str, dict[int, dict]]:
    rows, gold = [], {}
    for window in range(2 * SLOTS):
        slot = window // 2
        text = facts.get(slot, FILLER["video"]) if window % 2 == 0 else FILLER["video"]
        rows.append({"t_start": 10.0 * window, "t_end": 10.0 * window + 10.0, "text": text})
        if window % 2 == 0:
            gold[slot] = {"t_start": 10.0 * window + 2.0, "t_end": 10.0 * window + 8.0}
    return f"video/clip_{src}.jsonl", _jsonl(rows), gold


def _ui(src: int, facts: dict[int, str]) -> tuple[str, str, dict[int, dict]]:
    rows, gold = [], {}
    for element in range(2 * SLOTS):
        slot = element // 2
        top = round(0.15 * element + 0.05, 2)
        box = [0.1, top, 0.9, round(top + 0.1, 2)]
        text = facts.get(slot, FILLER["ui_screenshot"]) if element % 2 == 0 else "Spacer"
        rows.append({"bbox": box, "text": text})
        if element % 2 == 0:
            gold[slot] = {"bbox": [0.2, round(top + 0.02, 2), 0.8, round(top + 0.08, 2)]}
    return f"ui_screenshot/screen_{src}.jsonl", _jsonl(rows), gold


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


LAYOUT = {"pdf": _pdf, "conversation": _conversation, "code": _code, "video": _video,
          "ui_screenshot": _ui}


def _sources(modality: str) -> tuple[list[dict[str, Any]], dict[int, tuple[str, dict]]]:
    """Manifest rows (with `_text`) and, per fact, (source_id, gold region)."""
    facts = FACTS[modality]
    rows, where = [], {}
    if modality == "image":
        for i, (text, _, _) in enumerate(facts):
            rows.append(_row(modality, f"sample-image-{i}", f"image/img_{i}.txt", text + "\n", i))
            where[i] = (f"sample-image-{i}", {})
        return rows, where
    for src in range(N_SOURCES):
        mine = {i // N_SOURCES: facts[i][0] for i in range(len(facts)) if i % N_SOURCES == src}
        path, text, gold = LAYOUT[modality](src, mine)
        source_id = f"sample-{modality}-{src}"
        rows.append(_row(modality, source_id, path, text, src))
        for i in range(len(facts)):
            if i % N_SOURCES == src:
                where[i] = (source_id, gold[i // N_SOURCES])
    return rows, where


def _row(modality: str, source_id: str, path: str, text: str, src: int) -> dict[str, Any]:
    return {
        "source_id": source_id, "modality": modality, "path": path,
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "dataset": DATASET,
        "revision": REVISION, "license": LICENSE, "annotation_source": ANNOTATION,
        "observed_at": observed_of(src), "holder": holder_of(src), "_text": text,
    }


def _entry(modality: str, qid: str, question: str, answer: str | None,
           gold: list[dict[str, Any]], holder: str | None, as_of: str | None,
           split: str) -> dict[str, Any]:
    unanswerable = not gold
    return {
        "query_id": qid, "modality": modality, "question": question,
        "answer": None if unanswerable or not answer else answer,
        "answer_format": "none" if unanswerable or not answer else "str",
        "gold": gold,
        "scope": {"holder": holder, "session": None, "scenario": "sample"},
        "as_of": as_of, "unanswerable": unanswerable,
        "origin": {"dataset": DATASET, "revision": REVISION, "item": qid, "license": LICENSE},
        "split": split,
    }


def _entries(modality: str, where: dict[int, tuple[str, dict]]) -> list[dict[str, Any]]:
    out = []
    for i, (_, question, answer) in enumerate(FACTS[modality]):
        source_id, region = where[i]
        src = i if modality == "image" else i % N_SOURCES
        holder = holder_of(src) if i % 3 != 2 else None
        as_of = None if i % 4 == 3 else (EARLY_AS_OF if observed_of(src) == OLD else LATE_AS_OF)
        split = "dev" if i < DEV_FACTS else "test"
        gold = [{"source_id": source_id, "region": region}]
        out.append(_entry(modality, f"{modality}-{i:02d}", question, answer, gold, holder,
                          as_of, split))
    for j, question in enumerate(UNANSWERABLE[modality]):
        holder = (holder_of(j), holder_of(j), None, holder_of(j))[j]
        split = "dev" if j < 3 else "test"
        out.append(_entry(modality, f"{modality}-u{j}", question, None, [], holder,
                          LATE_AS_OF, split))
    return out


def write(out: Path) -> None:
    manifest, sets = [], {}
    for modality in FACTS:
        rows, where = _sources(modality)
        for row in rows:
            target = out / "corpus" / row["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(row.pop("_text"), encoding="utf-8", newline="\n")
            manifest.append(row)
        sets[modality] = _entries(modality, where)
    (out / "corpus" / "manifest.jsonl").write_text(_jsonl(manifest), encoding="utf-8")
    (out / "sets").mkdir(parents=True, exist_ok=True)
    for modality, entries in sets.items():
        (out / "sets" / f"{modality}.jsonl").write_text(_jsonl(entries), encoding="utf-8")
    (out / "README.md").write_text(README, encoding="utf-8")


README = """# Embedded retrieval sample (written for benchreg)

Everything here was written for this project by `python -m builders.retrieval.make_sample`
(content in `builders/retrieval/content.py`); no third-party text, data or annotation. It is a
demonstration set so that `python -m benchreg -m task='glob(retrieval/*)'` runs offline, not a
benchmark: its gold was written by hand together with the corpus, which spec 004 forbids for real
sets (gold from third-party human annotation only). Real sets: see `docs/retrieval.md`.

- `corpus/manifest.jsonl`: one row per source (sha256 of each file, dataset, revision,
  licence, annotation_source, observed_at, holder).
- `corpus/<modality>/...`: text stand-ins: pdf page text (`\\f` between pages, blank lines
  between blocks), conversation turns, code files (`{path: text}`), UI view elements
  (`{bbox, text}`), video transcript windows (`{t_start, t_end, text}`), image captions.
- `sets/<modality>.jsonl`: 12 dev entries (3 unanswerable) and 3 test entries (1 unanswerable)
  per modality; sources of two holders (alice, bob), observed 2024-01-10 or 2024-03-10; entries
  with and without `as_of` and `scope.holder`.
"""


def differences(expected: Path, actual: Path) -> list[str]:
    names = {p.relative_to(expected) for p in expected.rglob("*") if p.is_file()}
    names |= {p.relative_to(actual) for p in actual.rglob("*") if p.is_file()}
    return sorted(
        str(n) for n in names
        if not ((expected / n).is_file() and (actual / n).is_file()
                and filecmp.cmp(expected / n, actual / n, shallow=False))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the embedded sample")
    args = parser.parse_args(argv)
    if not args.check:
        write(SAMPLE_DIR)
        print(f"wrote {SAMPLE_DIR}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp))
        diff = differences(Path(tmp), SAMPLE_DIR)
    for name in diff:
        print(f"differs: {name}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
