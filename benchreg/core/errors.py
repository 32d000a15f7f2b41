"""User-facing errors.

A :class:`BenchregError` is bad input from the user (a task file, a data file, a predictions file,
an override). The app prints it as one line and exits with status 2, without a traceback.
"""

from __future__ import annotations

from pathlib import Path


class BenchregError(Exception):
    """Bad input: says what is wrong, where (file:line or record id), and how to fix it."""

    exit_code = 2

    def __init__(self, what: str, *, where: str | Path | None = None, fix: str | None = None):
        self.what = what
        self.where = str(where) if where is not None else None
        self.fix = fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        head = f"{self.where}: {self.what}" if self.where else self.what
        return f"{head} ({self.fix})" if self.fix else head


def at(path: str | Path, line: int | None = None) -> str:
    """Format a location as ``file:line``."""
    return f"{path}:{line}" if line is not None else str(path)


class IncompleteRunError(BenchregError):
    """A run finished with failed requests: its outputs are written and marked incomplete
    (`complete: false`), and the same command resumes it."""


class UnknownComponentError(BenchregError):
    """A task or config names a component that is not registered."""


class ParseError(ValueError):
    """A parser could not turn model text into an answer; the sample is marked invalid."""
