"""`locomo`: LoCoMo long-term conversation QA (conversation/SOURCE.md).

- Sources: one per session with turns, `locomo-<stem>/session_<s>`; its corpus file
  `corpus/conversation/locomo/<stem>/session_<s>.jsonl` holds the turns `{turn, speaker, text,
  dia_id}` (turn = the number after the colon of `dia_id`, 1-based within the session; image
  turns keep their text only: `blip_caption` is model-generated); `observed_at` = the session's
  `session_<s>_date_time`; holder = the conversation, `locomo-<stem>` (both speakers' memory).
- Time zone: LoCoMo's dates ("1:56 pm on 8 May, 2023") carry none; they are read as UTC
  (`+00:00`). Only their order matters here.
- Entries: `locomo-<stem>-<index in qa>`, question verbatim; category 5 (adversarial) ->
  unanswerable (answer null, gold []); answers as given (str, or int for the 6 int answers).
- Gold: each evidence id `D<s>:<t>` -> `{source_id: locomo-<stem>/session_<s>, region: {turn:
  t}}`. Strings joined by `;` or spaces are split; an id that is malformed (`D`, `D:11:26`) or
  names no turn (`D10:19`) is dropped and counted, the item kept while a valid id remains;
  repeats removed (counted). An answerable item without any valid id is skipped (counted).
- `as_of` (`--as-of`): `evidence` (default) = the time of the latest session holding one of
  the item's evidence turns (for an adversarial item: the turns its evidence names), so the
  sessions after it are future distractors and temporal correctness can fail; `last-session`
  = upstream's reading (questions asked after the last session: nothing is ever future). An
  item without a valid evidence id takes the last session.
- Split (`--dev`): by conversation, stems 26 and 30 -> dev, the 8 others -> test. A `--dev`
  given names stems of the source (else one error with the nearest stems).
"""

from __future__ import annotations

import argparse
import json
import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.annotations import LOCOMO
from benchreg.families.retrieval.importers.common import (
    Imported,
    Importer,
    Origin,
    Row,
    Staging,
    dedupe,
    entry,
    field_of,
    require_split,
    selection,
    source_row,
)

NAME = "locomo"
ORIGIN = Origin("LoCoMo", "e76cdff4a04fce19090596d49862fe87a5c15aaa",
                "CC BY-NC 4.0 (HF card; no LICENSE in GitHub repo)", LOCOMO.name)
FOLDER = "data/multimodal_dialog/locomo10_v2"
ZIP = "data/locomo10.zip"
DEV = "26,30"  # conversation stems of the dev split
EVIDENCE = re.compile(r"D(\d+):(\d+)")
TIME_FORMAT = "%I:%M %p on %d %B, %Y"


def locomo_time(text: str) -> str:
    """A LoCoMo date_time as ISO 8601 (UTC: the data set gives no zone)."""
    return datetime.strptime(text.strip(), TIME_FORMAT).replace(tzinfo=UTC).isoformat()


def conversations(src: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(stem, where, data) of each conversation file, from the folder or else the zip."""
    folder = src / FOLDER
    out = []
    if folder.is_dir():
        for file in sorted(folder.glob("*.json"), key=lambda p: p.stem):
            try:
                data = json.loads(file.read_text("utf-8"))
            except json.JSONDecodeError as exc:
                raise BenchregError(f"malformed JSON ({exc.msg})",
                                    where=f"{file}:{exc.lineno}") from None
            out.append((file.stem, str(file), data))
    elif (src / ZIP).is_file():
        try:
            with zipfile.ZipFile(src / ZIP) as archive:
                for name in sorted(n for n in archive.namelist() if n.endswith(".json")):
                    where = f"{src / ZIP}:{name}"
                    try:
                        data = json.loads(archive.read(name).decode("utf-8"))
                    except json.JSONDecodeError as exc:
                        raise BenchregError(f"malformed JSON ({exc.msg})",
                                            where=f"{where}:{exc.lineno}") from None
                    out.append((Path(name).stem, where, data))
        except zipfile.BadZipFile:
            raise BenchregError("not a zip file", where=src / ZIP) from None
    else:
        raise BenchregError(f"not found: {FOLDER}/ or {ZIP} (expected the LoCoMo repository "
                            "folder)", where=src)
    if not out:
        raise BenchregError("no conversation file (*.json)", where=folder)
    return sorted(out, key=lambda c: (int(c[0]) if c[0].isdigit() else 10**9, c[0]))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--as-of", choices=("evidence", "last-session"), default="evidence",
                        help="as_of of each question: the latest session holding its evidence "
                        "(default; later sessions are future distractors) or the last session "
                        "(upstream's reading)")
    parser.add_argument("--dev", default=None,
                        help=f"conversation stems of the dev split (default: {DEV})")


def build(args: argparse.Namespace, staging: Staging) -> Imported:
    found = conversations(args.src)
    dev = selection("--dev", args.dev, DEV, (stem for stem, _, _ in found),
                    "conversation stems", args.src)
    imported = Imported()
    future_distractors = 0
    for stem, where, data in found:
        if not isinstance(data, dict):
            raise BenchregError("a conversation file is a JSON object", where=where)
        holder = f"locomo-{stem}"
        sessions = sorted(int(k.split("_")[1]) for k, v in data.items()
                          if re.fullmatch(r"session_\d+", k) and v)
        if not sessions:
            raise BenchregError("no session with turns", where=where)
        times: dict[int, str] = {}
        turns: set[tuple[int, int]] = set()
        for s in sessions:
            times[s] = _session(data, s, stem, holder, where, turns, imported, staging)
        split = "dev" if stem in dev else "test"
        for i, qa in enumerate(field_of(data, "qa", where, list)):
            future_distractors += _add_entry(
                args, imported, stem, i, qa, f"{where}: qa[{i}]", times, turns, split
            )
    require_split(imported, "dev", "--dev", args.dev)
    imported.lines.append(
        f"as_of: {args.as_of}; {future_distractors} entries have later sessions (future "
        "distractors); dates read as UTC (LoCoMo gives no time zone)")
    return imported


def _session(
    data: dict[str, Any],
    s: int,
    stem: str,
    holder: str,
    where: str,
    turns: set[tuple[int, int]],
    imported: Imported,
    staging: Staging,
) -> str:
    """Session ``s`` written as a source (its turns added to ``turns``); its time."""
    raw_time = field_of(data, f"session_{s}_date_time", where, str)
    try:
        time = locomo_time(raw_time)
    except ValueError:
        raise BenchregError(f"session_{s}_date_time {raw_time!r} is not "
                            f"'{TIME_FORMAT}'", where=where) from None
    rows = []
    for turn in field_of(data, f"session_{s}", where, list):
        dia_id = field_of(turn, "dia_id", where, str)
        match = EVIDENCE.fullmatch(dia_id)
        if match is None or int(match[1]) != s:
            raise BenchregError(f"turn id {dia_id!r} is not D{s}:<turn>", where=where)
        t = int(match[2])
        turns.add((s, t))
        rows.append({"turn": t, "speaker": field_of(turn, "speaker", where, str),
                     "text": field_of(turn, "text", where, str), "dia_id": dia_id})
    imported.rows.append(source_row(
        f"{holder}/session_{s}", "conversation", ORIGIN, NAME,
        path=staging.write_jsonl(f"{stem}/session_{s}.jsonl", rows),
        observed_at=time, holder=holder, turns=len(rows)))
    return time


def _add_entry(
    args: argparse.Namespace,
    imported: Imported,
    stem: str,
    i: int,
    qa: Any,
    item_where: str,
    times: dict[int, str],
    turns: set[tuple[int, int]],
    split: str,
) -> int:
    """The entry of ``qa[i]`` added (or the item counted as skipped); 1 when it has later
    sessions (future distractors), else 0."""
    holder = f"locomo-{stem}"
    last = times[max(times)]
    question = field_of(qa, "question", item_where, str)
    category = qa.get("category")
    regions, sessions_hit = _evidence(qa, turns, holder, imported)
    unanswerable = category == 5
    if not unanswerable and not regions:
        imported.skipped["answerable with no valid evidence id"] += 1
        return 0
    if args.as_of == "evidence" and sessions_hit:
        as_of = times[max(sessions_hit)]
    else:
        as_of = last
        if args.as_of == "evidence":
            imported.notes["as_of = last session (no valid evidence id)"] += 1
    gold = [] if unanswerable else dedupe(regions, imported.notes,
                                          "repeated evidence turns removed")
    answer = qa.get("answer")
    answer_format = "int" if isinstance(answer, int) and not isinstance(
        answer, bool) else "str"
    if not unanswerable and not isinstance(answer, str | int):
        raise BenchregError("an answerable item needs an `answer`", where=item_where)
    imported.entries.append(entry(
        f"locomo-{stem}-{i}", "conversation", question, answer, answer_format, gold,
        ORIGIN, f"{stem}#qa[{i}]", split, as_of=as_of, holder=holder,
        scenario=f"category-{category}"))
    return int(as_of != last)


def _evidence(qa: dict[str, Any], turns: set[tuple[int, int]], holder: str,
              imported: Imported) -> tuple[list[Row], set[int]]:
    regions: list[Row] = []
    sessions: set[int] = set()
    for raw in qa.get("evidence") or []:
        for ev in re.split(r"[;\s]+", str(raw)):
            if not ev:
                continue
            match = EVIDENCE.fullmatch(ev)
            if match is None:
                imported.notes["malformed evidence ids dropped"] += 1
                continue
            s, t = int(match[1]), int(match[2])
            if (s, t) not in turns:
                imported.notes["evidence ids naming no turn dropped"] += 1
                continue
            if match[2] != str(t):
                imported.notes["evidence ids with a leading zero read as the number"] += 1
            sessions.add(s)
            regions.append({"source_id": f"{holder}/session_{s}", "region": {"turn": t}})
    return regions, sessions


IMPORTER = Importer(
    NAME, "conversation", "Import LoCoMo (10 long conversations, QA with evidence turns).",
    add_arguments, build,
    src_help="the LoCoMo repository folder with data/multimodal_dialog/locomo10_v2/*.json or "
    "data/locomo10.zip (e.g. ../shared/data/retrieval/conversation/locomo)",
)
