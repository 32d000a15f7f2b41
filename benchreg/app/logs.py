"""The command line's log lines: one short format for runs, sweeps and every subcommand, an INFO
line that repeats printed once, Hydra's own INFO lines only when asked for.

- Format: `INFO    message` (level, then the message), on stderr, for loguru; Python logging
  records (Hydra's, a launcher's, a library's) are shown in the same form by the handler Hydra
  sets up from benchreg's ``hydra/hydra_logging`` config (``conf/hydra/hydra_logging/
  benchreg.yaml``, filtered by :class:`HydraLines`).
- Once: an INFO line that only differs from an earlier one of the same place in the code by
  its file name in front (`shuffled.jsonl: ...` after `correct.jsonl: ...`) or by a hex digest
  is not printed again in this process, nor (during a sweep: :func:`share_once`) in any other
  process of the sweep, such as a launcher's workers; a sweep ends with one line counting the
  lines held back (:func:`repeats_note`). Warnings and errors are always printed.
- Verbose: ``BENCHREG_VERBOSE=1`` prints every line, Hydra's own INFO lines (the launcher's
  job list), each sweep job's full table and the sweep's per-job summary table.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core.provenance import redact_text

VERBOSE_ENV = "BENCHREG_VERBOSE"
CLI_ENV = "BENCHREG_CLI_LOGGING"  # set by the command line, read by launcher workers
FORMAT = "<level>{level: <7}</level> {message}"
_FILE_PREFIX = re.compile(r"^[^\s:]+\.[A-Za-z0-9]{1,8}: ")  # `correct.jsonl: ...`
_DIGEST = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{8,}\b")
_state: dict[str, Any] = {"configured": False}


def verbose() -> bool:
    """Whether ``BENCHREG_VERBOSE`` asks for every line and table."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def shape(message: str) -> str:
    """What two repeats of one line have in common: the message without a leading file name
    and with hex digests masked."""
    return _DIGEST.sub("#", _FILE_PREFIX.sub("<file>: ", message))


ONCE_FOLDER = ".benchreg-once"  # in a sweep folder while it runs: one marker file per line shown


class Once:
    """A loguru filter: an INFO line of the same place and shape is printed once (in this
    process; with :attr:`shared`, a folder, once among all processes that share it)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[Any, ...], list[Any]] = {}  # key -> [first message, count]
        self.shared: Path | None = None

    def __call__(self, record: Any) -> bool:
        if record["level"].name != "INFO" or record["extra"].get("repeat"):
            return True
        key = (record["name"], record["function"], record["line"], shape(record["message"]))
        entry = self.seen.get(key)
        if entry is None:
            self.seen[key] = [record["message"], 1]
            return self._first_in_sweep(key)
        entry[1] += 1
        return False

    def _first_in_sweep(self, key: tuple[Any, ...]) -> bool:
        """Whether no other process of the sweep printed this line (a marker file, created
        exclusively, says that one did); True when nothing is shared or the folder fails."""
        if self.shared is None:
            return True
        name = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:24]
        try:
            self.shared.mkdir(exist_ok=True)
            os.close(os.open(self.shared / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            self.seen[key][1] += 1  # shown by another process: counted as held back here
            return False
        except OSError:
            return True
        return True

    def held_back(self) -> list[tuple[str, int]]:
        """(first message, times seen) of every line printed once but seen more often."""
        return [(message, count) for message, count in self.seen.values() if count > 1]

    def reset(self) -> None:
        self.seen.clear()


ONCE = Once()


def _redact(record: Any) -> None:
    record["message"] = redact_text(record["message"])


def setup() -> None:
    """The command line's loguru handler (replacing any other), with redaction;
    safe to call again."""
    logger.remove()
    logger.configure(patcher=_redact)
    logger.add(sys.stderr, level="INFO", format=FORMAT, filter=None if verbose() else ONCE)
    os.environ[CLI_ENV] = "1"
    _state["configured"] = True


def setup_worker() -> None:
    """In a launcher's worker process (joblib's loky workers do not run the command line's
    main): the same handler, once per process, when the command line started the sweep."""
    if not _state["configured"] and os.environ.get(CLI_ENV) == "1":
        setup()


def share_once(sweep_dir: Path | None) -> None:
    """Lines are printed once per sweep, across the processes that run its jobs (None: per
    process)."""
    ONCE.shared = sweep_dir / ONCE_FOLDER if sweep_dir is not None else None


def end_sharing(sweep_dir: Path) -> None:
    """Remove the sweep's markers (at the end of the sweep)."""
    with contextlib.suppress(OSError):
        shutil.rmtree(sweep_dir / ONCE_FOLDER)
    share_once(None)


def repeats_note() -> str | None:
    """One line on the lines held back since the last call (then forgotten), or None."""
    held = ONCE.held_back()
    ONCE.reset()
    if not held:
        return None
    extra = sum(count - 1 for _, count in held)
    first = held[0][0]
    example = first if len(first) <= 90 else first[:89] + "…"
    lines = "line" if extra == 1 else "lines"
    return f"{extra} repeated {lines} not shown (like: {example}); {VERBOSE_ENV}=1 shows every line"


class HydraLines(logging.Filter):
    """The filter of the handler Hydra sets up for its own log lines (benchreg's
    ``hydra/hydra_logging=benchreg``: `LEVEL   message`): a record below WARNING is shown only
    when verbose (Hydra's launch lines: the sweep's own progress lines say the same), and a
    record shown is redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING and not verbose():
            return False
        record.msg, record.args = redact_text(record.getMessage()), None
        return True
