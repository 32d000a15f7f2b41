"""Regenerate the embedded MolP2S sample (or a reference-size release with ``--full``).

Run from the project root:

    python -m builders.molp2s.make_sample                   # rewrite the embedded sample
    python -m builders.molp2s.make_sample --check           # verify it is reproduced exactly
    python -m builders.molp2s.make_sample --full --out DIR  # 136 records, 240/258 counterfactuals
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

from builders.molp2s import generate

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = ROOT / "benchreg" / "families" / "molp2s" / "sample"
SCRIPT = "-m builders.molp2s.make_sample"


def write(out: Path, *, full: bool, seed: int) -> dict[str, dict[str, int]]:
    n_records = generate.REFERENCE_RECORDS if full else generate.SAMPLE_RECORDS
    sizes = generate.REFERENCE_COUNTERFACTUAL if full else generate.SAMPLE_COUNTERFACTUAL
    counts = generate.generate_release(
        out, n_records=n_records, counterfactual_sizes=sizes, seed=seed
    )
    command = f"python {SCRIPT} --seed {seed}" + (" --full --out <dir>" if full else "")
    readme = generate.release_readme(
        seed=seed, n_records=n_records, counts=counts, command=command
    )
    (out / "README.md").write_text(readme, encoding="utf-8", newline="\n")
    return counts


def differences(expected: Path, actual: Path) -> list[str]:
    """Relative paths of files that differ or exist on one side only."""
    left = {p.relative_to(expected) for p in expected.rglob("*") if p.is_file()}
    right = {p.relative_to(actual) for p in actual.rglob("*") if p.is_file()}
    changed = [
        p for p in sorted(left & right)
        if not filecmp.cmp(expected / p, actual / p, shallow=False)
    ]
    return [str(p) for p in sorted(left ^ right) + changed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help=f"output folder (default: {SAMPLE_DIR})")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--full", action="store_true", help="reference sizes (136 records)")
    parser.add_argument(
        "--check", action="store_true", help="regenerate into a temporary folder and compare"
    )
    args = parser.parse_args(argv)
    if args.full and args.out is None:
        parser.error("--full needs --out (the embedded sample stays small)")
    out = args.out or SAMPLE_DIR
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            write(Path(tmp), full=args.full, seed=args.seed)
            diff = differences(out, Path(tmp))
        if diff:
            print(f"{out} is not reproduced: {', '.join(diff[:10])}", file=sys.stderr)
            return 1
        print(f"{out} is reproduced byte for byte")
        return 0
    counts = write(out, full=args.full, seed=args.seed)
    total = sum(sum(views.values()) for views in counts.values())
    print(f"wrote {total} records in {len(counts)} directories to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
