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


def _modules_after(code: str) -> set[str]:
    """The benchreg.families modules a fresh interpreter has imported after ``code``."""
    import subprocess
    import sys

    script = (
        f"import sys\n{code}\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('benchreg.families.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(done.stdout.split())


def test_binding_a_task_imports_only_its_familys_components() -> None:
    loaded = _modules_after("import benchreg; benchreg.load_task('molp2s/gap')")
    assert "benchreg.families.molp2s.loader" in loaded
    assert "benchreg.families.retrieval" in loaded  # every family's package: names and roots
    assert not {m for m in loaded if m.startswith("benchreg.families.retrieval.")}
    assert not {m for m in loaded if m.startswith("benchreg.families.cblue.")}


def test_a_name_not_loaded_yet_is_found_by_loading_everything() -> None:
    """A look-up finds the same component whatever was loaded before it."""
    code = (
        "from benchreg.core import registry\n"
        "registry.families.get('molp2s')\n"
        "assert registry.loaders.get('retrieval') is not None\n"
        "assert 'cblue' in registry.loaders"
    )
    loaded = _modules_after(code)
    assert "benchreg.families.retrieval.loader" in loaded
    assert "benchreg.families.cblue.loader" in loaded


def test_an_unknown_name_is_unknown_after_everything_is_loaded() -> None:
    from benchreg.core import registry

    with pytest.raises(UnknownComponentError) as info:
        registry.loaders.get("molp2")
    assert "did you mean 'molp2s'?" in info.value.message
    assert "retrieval" in info.value.message  # the known names of every family
