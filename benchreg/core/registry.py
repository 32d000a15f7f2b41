"""Name -> component registries.

Task YAML files may only *name* components; the names are looked up here. Families register their
components at import time with the decorators below, so a task file can never import or run code.
Families themselves are found through the ``benchreg.families`` entry-point group (the built-in
ones are declared in pyproject.toml; another package can add its own the same way).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from benchreg.core.errors import BenchregError, UnknownComponentError

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
        load_families()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownComponentError(
                f"unknown {self.kind} {name!r}{self._suggestion(name)}",
                where=where,
                fix=f"known {self.kind}s: {', '.join(sorted(self._items)) or '(none)'}",
            ) from None

    def build(self, name: str, params: Mapping[str, Any], *args: Any) -> Any:
        """Call the factory registered as ``name`` with ``*args`` and keyword ``params``.

        A param the factory does not take is one clear error naming the params it does take.
        """
        factory: Any = self.get(name)
        check_params(f"{self.kind} {name!r}", factory, params, len(args))
        return factory(*args, **params)

    def _suggestion(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._items), n=1, cutoff=0.5)
        return f"; did you mean {close[0]!r}?" if close else ""

    def names(self) -> list[str]:
        load_families()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        load_families()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def check_params(what: str, fn: Any, params: Mapping[str, Any], n_args: int = 0) -> None:
    """Raise a BenchregError when ``fn(*args, **params)`` does not fit its signature."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*([None] * n_args), **params)
    except TypeError as exc:
        accepted = [
            p.name
            for p in list(signature.parameters.values())[n_args:]
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        raise BenchregError(
            f"{what}: bad params {sorted(params)} ({exc})",
            fix=f"it takes: {', '.join(accepted) or 'no params'}",
        ) from None


ENTRY_POINT_GROUP = "benchreg.families"
_families_loaded = False


def load_families() -> None:
    """Import every registered family once, so that its components are registered."""
    global _families_loaded
    if _families_loaded:
        return
    _families_loaded = True
    from importlib import import_module
    from importlib.metadata import entry_points

    import_module("benchreg.core.metrics")
    import_module("benchreg.core.ranking")
    import_module("benchreg.systems")
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        entry.load()


loaders: Registry[Any] = Registry("loader")
answer_schemas: Registry[Any] = Registry("answer schema")
parsers: Registry[Any] = Registry("parser")
metrics: Registry[Any] = Registry("metric")
counters: Registry[Any] = Registry("counter")
prediction_readers: Registry[Any] = Registry("prediction reader")
resolvers: Registry[Any] = Registry("resolver")
prompt_renderers: Registry[Any] = Registry("prompt renderer")
baselines: Registry[Any] = Registry("baseline")
analyses: Registry[Any] = Registry("analysis")
validators: Registry[Any] = Registry("validator")
systems: Registry[Any] = Registry("system")
families: Registry[Any] = Registry("family")
