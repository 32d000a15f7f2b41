"""Name -> component registries.

Task YAML files may only *name* components; the names are looked up here. Families register their
components at import time with the decorators below, so a task file can never import or run code.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from benchreg.core.errors import UnknownComponentError

T = TypeVar("T")


class Registry(Generic[T]):
    """A named collection of components of one kind (loaders, metrics, ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorate(component: T) -> T:
            self.add(name, component)
            return component

        return decorate

    def add(self, name: str, component: T) -> None:
        if name in self._items and self._items[name] is not component:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = component

    def get(self, name: str, *, where: str | None = None) -> T:
        _ensure_builtin_families()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownComponentError(
                f"unknown {self.kind} {name!r}{self._suggestion(name)}",
                where=where,
                fix=f"known {self.kind}s: {', '.join(sorted(self._items)) or '(none)'}",
            ) from None

    def _suggestion(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._items), n=1, cutoff=0.5)
        return f"; did you mean {close[0]!r}?" if close else ""

    def names(self) -> list[str]:
        _ensure_builtin_families()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        _ensure_builtin_families()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def _ensure_builtin_families() -> None:
    # Imported lazily so that `benchreg.core` stays free of family details.
    from benchreg.families import load_builtin_families

    load_builtin_families()


loaders: Registry[Any] = Registry("loader")
answer_schemas: Registry[Any] = Registry("answer schema")
parsers: Registry[Any] = Registry("parser")
metrics: Registry[Any] = Registry("metric")
counters: Registry[Any] = Registry("counter")
prediction_readers: Registry[Any] = Registry("prediction reader")
prompt_renderers: Registry[Any] = Registry("prompt renderer")
baselines: Registry[Any] = Registry("baseline")
analyses: Registry[Any] = Registry("analysis")
validators: Registry[Any] = Registry("validator")
systems: Registry[Any] = Registry("system")
families: Registry[Any] = Registry("family")
