from __future__ import annotations

import pytest

from benchreg.core.errors import UnknownComponentError
from benchreg.core.registry import Registry


def test_register_and_get() -> None:
    reg: Registry[int] = Registry("widget")
    reg.add("alpha", 1)
    assert reg.get("alpha") == 1
    assert "alpha" in reg


def test_unknown_name_lists_known_names_and_nearest_match() -> None:
    reg: Registry[int] = Registry("widget")
    reg.add("accuracy", 1)
    reg.add("recall_at_10", 2)
    with pytest.raises(UnknownComponentError) as info:
        reg.get("acuracy", where="task.yaml:3")
    message = info.value.message
    assert message.startswith("task.yaml:3: unknown widget 'acuracy'; did you mean 'accuracy'?")
    assert "known widgets: accuracy, recall_at_10" in message


def test_double_registration_is_refused() -> None:
    reg: Registry[int] = Registry("widget")
    reg.add("a", 1)
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("a", 2)
