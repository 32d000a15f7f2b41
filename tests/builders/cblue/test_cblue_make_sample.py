"""The embedded PromptCBLUE sample is what `builders/cblue/make_sample.py` writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SAMPLE_DIR = ROOT / "benchreg" / "families" / "cblue" / "sample"


def test_embedded_sample_is_what_the_generator_writes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "builders.cblue.make_sample", "--check", "--out", str(SAMPLE_DIR)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
