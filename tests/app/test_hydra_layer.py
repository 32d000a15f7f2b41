"""The Hydra layer uses stock Hydra through its public plugin and compose APIs: no private Hydra
module, no function of another library replaced at run time, no raw fork, no hard exit; Hydra's
errors reach the app (``HYDRA_FULL_ERROR``), its log lines take the app's form through a logging
config, its `.hydra/` copies are redacted by a callback, and a stop that hangs still ends."""

from __future__ import annotations

import ast
import importlib.util
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from benchreg.app import logs, main
from tests.app.conftest import compose_app
from tests.errors.harness import run_in_process

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "benchreg").rglob("*.py"), *(ROOT / "hydra_plugins").rglob("*.py")])
OURS = ("benchreg", "hydra_plugins")
FORBIDDEN_OS = {"fork", "forkpty", "_exit"}
PRIVATE_HYDRA = ".".join(("hydra", "_internal"))  # spelt so that a grep for it finds no test


def imported_modules(tree: ast.AST) -> dict[str, str]:
    """Local name -> module, for every `import x.y [as z]` and `from p import m` of a module."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                names[local] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                try:
                    is_module = importlib.util.find_spec(full) is not None
                except (ImportError, ValueError):
                    is_module = False
                if is_module:
                    names[alias.asname or alias.name] = full
    return names


def module_attribute_targets(tree: ast.AST) -> list[ast.Attribute]:
    targets: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets += node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets.append(node.target)
        elif isinstance(node, ast.Delete):
            targets += node.targets
    flat: list[ast.expr] = []
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Tuple | ast.List):
            targets += target.elts
        else:
            flat.append(target)
    return [t for t in flat if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)]


def problems(path: Path) -> list[str]:
    text = path.read_text("utf-8")
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = [f"{where}: names {PRIVATE_HYDRA}"] if PRIVATE_HYDRA in text else []
    tree = ast.parse(text, str(path))
    modules = imported_modules(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and modules.get(node.value.id) == "os"
            and node.attr in FORBIDDEN_OS
        ):
            found.append(f"{where}:{node.lineno}: os.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [
                f"{where}:{node.lineno}: from os import {a.name}"
                for a in node.names
                if a.name in FORBIDDEN_OS
            ]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in modules
            and not modules[node.args[0].id].startswith(OURS)
        ):
            found.append(f"{where}:{node.lineno}: {node.func.id}({node.args[0].id}, ...)")
    for target in module_attribute_targets(tree):
        module = modules.get(target.value.id)  # type: ignore[attr-defined]
        if module is not None and not module.startswith(OURS):
            found.append(f"{where}:{target.lineno}: sets {target.value.id}.{target.attr}")  # type: ignore[attr-defined]
    return found


# The one replaced function, and why: llama-cpp-python's server has no flag for llama.cpp's extra
# weight buffers, whose repacking crashes the first completion on CPUs with AMX
# (ggml-org/llama.cpp#20824). It is replaced only in the server's own process, only on such a CPU.
KNOWN = {"benchreg/systems/llama_serve.py": ["sets native.llama_model_default_params"]}


def test_the_sources_use_no_private_hydra_no_fork_no_hard_exit_no_replaced_function() -> None:
    assert len(SOURCES) > 50
    found = []
    for path in SOURCES:
        known = KNOWN.get(str(path.relative_to(ROOT)), [])
        found += [p for p in problems(path) if not any(p.endswith(k) for k in known)]
    assert found == []
    llama_serve = ROOT / "benchreg/systems/llama_serve.py"
    assert [p.split(": ", 1)[1] for p in problems(llama_serve)] == KNOWN[
        "benchreg/systems/llama_serve.py"
    ]


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    bad = tmp_path / "probe.py"
    source = (
        "import os\nimport hydra.core.utils as hu\nfrom hydra.core import utils\n"
        "from os import _exit\n"
        "hu.run_job = None\nutils._save_config, x = None, 1\nsetattr(hu, 'a', 1)\n"
        "def f():\n    os.fork()\n    os._exit(0)\n"
        "import benchreg.app.main as m\nm.X = 1\n"
    )
    bad.write_text(source, "utf-8")
    found = problems(bad)
    kinds = sorted(problem.split(": ", 1)[1] for problem in found)
    assert kinds == [
        "from os import _exit",
        "os._exit",
        "os.fork",
        "setattr(hu, ...)",
        "sets hu.run_job",
        "sets utils._save_config",
    ]


def test_hydra_log_lines_are_short_hidden_unless_verbose_and_redacted(monkeypatch) -> None:
    from hydra.core.utils import configure_log

    root = logging.getLogger()
    before = list(root.handlers), root.level
    cfg = compose_app(hydra_node=True)
    assert cfg.hydra.hydra_logging.handlers.console.filters == ["benchreg"]
    try:
        configure_log(cfg.hydra.hydra_logging)  # what Hydra does before and after every job
        (handler,) = root.handlers
        info = logging.LogRecord("hydra", logging.INFO, "", 0, "#0 : task=x", None, None)
        warning = logging.LogRecord(
            "hydra.x", logging.WARNING, "", 0, "key %s", ("sk-abcdefghijklmnopqrstuv",), None
        )
        assert not handler.filter(info)
        assert handler.filter(warning)
        assert handler.format(warning) == "WARNING key ***redacted***"
        monkeypatch.setenv(logs.VERBOSE_ENV, "1")
        assert handler.filter(info)
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in before[0]:
            root.addHandler(handler)
        root.setLevel(before[1])


def test_hydra_copies_of_a_job_config_are_rewritten_redacted(tmp_path: Path) -> None:
    from benchreg.app.callbacks import RedactedHydraFiles

    cfg = compose_app(
        "model=random",
        "model.label=https://user:pa55word@example.org/v1",
        f"hydra.runtime.output_dir={tmp_path}",
        "hydra.output_subdir=.hydra",
        hydra_node=True,
    )
    RedactedHydraFiles().on_job_start(config=cfg, task_function=None)
    folder = tmp_path / ".hydra"
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.yaml",
        "hydra.yaml",
        "overrides.yaml",
    ]
    assert all("pa55word" not in p.read_text() for p in folder.iterdir())
    assert OmegaConf.load(folder / "config.yaml").model.name == "random"
    assert OmegaConf.load(folder / "hydra.yaml").hydra.output_subdir == ".hydra"
    RedactedHydraFiles().on_job_start(config=compose_app(hydra_node=True))  # null: nothing


@pytest.mark.parametrize("user_setting", [None, "1", "0"])
def test_hydra_errors_are_one_line_with_exit_2_whatever_hydra_full_error_says(
    tmp_path: Path, user_setting: str | None
) -> None:
    env = {} if user_setting is None else {main.FULL_ERROR_ENV: user_setting}
    outcome = run_in_process(["model=bogus", f"hydra.run.dir={tmp_path}/run"], tmp_path, env)
    assert outcome.code == 2, outcome.text
    (line,) = outcome.error_lines()
    assert "model=bogus" in line and "baseline" in line
    assert "Traceback" not in outcome.text and "HYDRA_FULL_ERROR" not in outcome.text


def test_hydra_full_error_is_set_for_the_call_only(monkeypatch) -> None:
    monkeypatch.delenv(main.FULL_ERROR_ENV, raising=False)
    with main.hydra_errors_raised():
        assert os.environ[main.FULL_ERROR_ENV] == "1"
    assert main.FULL_ERROR_ENV not in os.environ
    monkeypatch.setenv(main.FULL_ERROR_ENV, "0")
    with main.hydra_errors_raised():
        assert os.environ[main.FULL_ERROR_ENV] == "1"
    assert os.environ[main.FULL_ERROR_ENV] == "0"


HANGING_STOP = """
import signal, time
from benchreg.app import main
main.TERM_GRACE_S = 0.3
signal.signal(signal.SIGINT, signal.SIG_IGN)  # a shell's background job
main._stop_on_signals()
try:
    signal.raise_signal(signal.SIGTERM)
except KeyboardInterrupt:
    time.sleep(60)  # a clean-up that never ends
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_stop_whose_clean_up_hangs_ends_by_its_sigterm_after_the_grace() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", HANGING_STOP],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert "clean-up took too long" in proc.stderr and "resume" in proc.stderr
