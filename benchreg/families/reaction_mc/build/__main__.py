"""The builder command: a condition table (CSV + YAML config) -> a V6 output directory.

    python -m benchreg.families.reaction_mc.build --config <yaml> --out <dir> --seed N
        [--no-prompts]

Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchreg.core.errors import BenchregError
from benchreg.families.reaction_mc.build import build, write_release


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchreg.families.reaction_mc.build",
        description="Build the 6 reaction-condition multiple-choice files from a CSV table.",
    )
    parser.add_argument("--config", type=Path, required=True, help="builder YAML config")
    parser.add_argument("--out", type=Path, required=True, help="output (V6) directory")
    parser.add_argument("--seed", type=int, default=0, help="seed for every random choice")
    parser.add_argument("--no-prompts", action="store_true",
                        help="write only the question files and the report")
    args = parser.parse_args(argv)
    try:
        questions, report = build(args.config, args.seed)
        write_release(args.out, questions, report, with_prompts=not args.no_prompts)
    except BenchregError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return exc.exit_code
    counts = ", ".join(f"{t}={n}" for t, n in report["questions"].items())
    print(f"wrote {report['questions_total']} questions to {args.out} ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
