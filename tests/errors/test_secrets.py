"""A secret planted through every channel we can think of never reaches an output file, a folder
name or the terminal: task YAML, the environment, command-line overrides (rejected), a model
config file of the user's own, `${oc.env:...}`, Hydra's `.hydra/` copies, `multirun.yaml`,
`sweep.json` and `hydra.sweep.subdir=${hydra.job.override_dirname}` folder names."""

from __future__ import annotations

from pathlib import Path

from tests.errors.harness import run_in_process

SECRET = "sk-PLANTEDsecret0123456789abcdef"
URL_PASSWORD = "PLANTEDpassw0rd"
TOKEN = "PLANTEDtoken42"
PLANTED = (SECRET, URL_PASSWORD, TOKEN)

TASK = f"""\
defaults:
  - /task/_base/molp2s@_here_
  - _self_
name: mine/leaky
description: "uses key {SECRET} and https://user:{URL_PASSWORD}@example.org/data"
data: [data/gap]
"""


def all_text(folder: Path) -> str:
    parts = []
    for path in folder.rglob("*"):
        parts.append(str(path))  # folder and file names
        if path.is_file():
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def test_a_planted_secret_reaches_no_output(tmp_path: Path) -> None:
    user = tmp_path / "mine"
    (user / "tasks" / "mine").mkdir(parents=True)
    (user / "tasks" / "mine" / "leaky.yaml").write_text(TASK)
    (user / "model").mkdir()
    (user / "model" / "leaky.yaml").write_text(
        f"name: random\nseed: 0\nlabel: 'https://u:{URL_PASSWORD}@h/v1'\n"
    )
    env = {"MY_API_TOKEN": TOKEN, "OPENAI_API_KEY": SECRET, "HF_TOKEN": TOKEN}
    searchpath = f"hydra.searchpath=[file://{user}]"
    out = tmp_path / "out"
    terminal = []

    def run(*args: str, code: int) -> None:
        outcome = run_in_process(list(args), tmp_path, env)
        terminal.append(outcome.text)
        assert outcome.code == code, outcome.text

    # a run that succeeds: the task entry carries secrets, the environment too, .hydra/ is kept
    run(
        "task=mine/leaky",
        searchpath,
        f"hydra.run.dir={out}/run",
        "hydra.output_subdir=.hydra",
        "run.bootstrap=0",
        code=0,
    )
    # a sweep whose job folders are named by the overrides, with .hydra/ copies
    run(
        "-m",
        "task=mine/leaky",
        searchpath,
        f"hydra.sweep.dir={out}/sweep",
        "hydra.sweep.subdir=${hydra.job.num}_${hydra.job.override_dirname}",
        "hydra.output_subdir=.hydra",
        "hydra.job.config.override_dirname.exclude_keys=[task]",
        "model=random,baseline",
        "run.limit=2",
        "run.bootstrap=0",
        code=0,
    )
    # rejected before anything is written: secrets on the command line, in a config file of the
    # user's own and through ${oc.env:...}
    for bad in (
        [f"model.api_key={SECRET}"],
        [f"+model.params.token={TOKEN}"],
        [f"model.label=https://user:{URL_PASSWORD}@example.org"],
        ["model.label=${oc.env:MY_API_TOKEN}"],
        ["model.label=${oc.env:OPENAI_API_KEY}"],
        ["model=leaky"],
        [f"hydra.sweep.subdir=x{SECRET}", "-m", "model=random"],
    ):
        run(
            "task=mine/leaky",
            searchpath,
            f"hydra.run.dir={out}/bad",
            f"hydra.sweep.dir={out}/badsweep",
            "hydra.output_subdir=.hydra",
            *bad,
            code=2,
        )

    written = all_text(out)
    assert (out / "run" / "provenance.json").is_file() and (
        out / "sweep" / "multirun.yaml"
    ).is_file()
    assert (out / "run" / ".hydra" / "config.yaml").is_file()
    for secret in PLANTED:
        assert secret not in written, f"{secret} leaked into {out}"
        assert secret not in "\n".join(terminal), f"{secret} leaked onto the terminal"
    assert "***redacted***" in (out / "run" / "provenance.json").read_text()
