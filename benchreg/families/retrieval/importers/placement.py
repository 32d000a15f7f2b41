"""Putting a finished import into the data root, all or nothing.

- A new data root is built whole in a temp folder beside it
  (`<parent>/.<root>.import-<source>.tmp`) and put in place by one rename: before it the root
  does not exist, after it the root is complete.
- An existing root gets the import's paths (its corpus folder, its set file, the manifest) one
  rename each, every old path first renamed aside into the temp folder; if any rename fails,
  every step already done is undone in reverse order (the new path removed, the old one renamed
  back, folders made for it removed), so the root is left as it was.

Every rename stays on one file system (the temp folder is inside the root, or beside a new one).
A failure is re-raised as one located error line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from benchreg.core.errors import BenchregError


def place_new_root(built: Path, root: Path) -> None:
    """Rename the complete root ``built`` to ``root`` (absent): the import's single commit."""
    try:
        os.rename(built, root)
    except OSError as exc:
        raise _placement_error(exc, root) from None


@dataclass
class Placement:
    """The renames into an existing root, recorded so that a failure undoes them all."""

    aside_dir: Path  # where the old paths go (inside the temp folder, removed with it)
    done: list[tuple[Path, Path | None]] = field(default_factory=list)  # (target, its old one)
    made_dirs: list[Path] = field(default_factory=list)

    def place(self, moves: list[tuple[Path, Path]]) -> None:
        """Each ``(new, target)``: the old target renamed aside, ``new`` renamed to it."""
        for new, target in moves:
            _check_kind(new, target)
        current = self.aside_dir  # the target being placed, named if a rename fails
        try:
            for new, current in moves:
                self._make_parents(current.parent)
                old = None
                if current.exists() or current.is_symlink():
                    self.aside_dir.mkdir(parents=True, exist_ok=True)
                    old = self.aside_dir / str(len(self.done))
                    os.replace(current, old)
                self.done.append((current, old))
                os.replace(new, current)
        except BaseException as exc:
            self.undo()
            if isinstance(exc, OSError):
                raise _placement_error(exc, current) from None
            raise

    def undo(self) -> None:
        for target, old in reversed(self.done):
            _remove(target)
            if old is not None:
                os.replace(old, target)
        for folder in reversed(self.made_dirs):
            with contextlib.suppress(OSError):  # not empty: another writer's file; keep it
                folder.rmdir()
        self.done.clear()
        self.made_dirs.clear()

    def _make_parents(self, folder: Path) -> None:
        missing = [p for p in (folder, *folder.parents) if not p.exists()]
        for parent in reversed(missing):
            parent.mkdir()
            self.made_dirs.append(parent)


def _check_kind(new: Path, target: Path) -> None:
    """A folder where the import puts a file (or a file where it puts a folder) is not the old
    version of it: refused before anything moves, rather than replaced."""
    if (target.exists() or target.is_symlink()) and target.is_dir() != new.is_dir():
        kind = "a folder" if target.is_dir() else "a file"
        wanted = "folder" if new.is_dir() else "file"
        raise BenchregError(
            f"{kind} is where the import puts its {wanted}; nothing was written",
            where=target,
            fix="move it away (or import into another root) and import again",
        )


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _placement_error(exc: OSError, where: Path) -> BenchregError:
    reason = exc.strerror or type(exc).__name__
    return BenchregError(
        f"cannot move the import into place ({reason}); the data root was left as it was",
        where=where,
        fix="free that path (or its folder) and import again",
    )
