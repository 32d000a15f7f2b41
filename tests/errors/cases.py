"""The catalogue of bad inputs: each is one user mistake, across the core and the families.

A case is (id, args, where, setup): `args` are command-line arguments (`{ws}` is the case's
workspace folder), `where` a regex the single error line must match (the place: file:line, record
id or the override), `setup(ws)` writes the bad files. Every case runs into the folder of an
earlier finished run (`{ws}/prior`) unless it names its own `hydra.run.dir`, so "nothing
overwritten" is checked on real outputs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.errors.conftest import copy_sample

Setup = Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    id: str
    klass: str
    args: tuple[str, ...]
    where: str
    setup: Setup | None = None
    env: dict[str, str] = field(default_factory=dict)
    own_dir: bool = False  # the case sets hydra.run.dir itself

    def argv(self, ws: Path) -> list[str]:
        args = [a.replace("{ws}", str(ws)) for a in self.args]
        if not self.own_dir and not (args and args[0] in ("analyze", "tasks")):
            args.append(f"hydra.run.dir={ws}/prior")
        return args


CASES: list[Case] = []


def case(
    klass: str,
    id: str,
    *args: str,
    where: str,
    setup: Setup | None = None,
    env: dict[str, str] | None = None,
    own_dir: bool = False,
) -> None:
    CASES.append(Case(id, klass, tuple(args), where, setup, env or {}, own_dir))


# --- 1. run.* options ----------------------------------------------------------------------------
for value in ("0", "-1", "abc", "1.5", "true", "'3'", "[1]"):
    case("run options", f"run.limit={value}", f"run.limit={value}", where=r"run\.limit")
for value in ("-5", "x", "1.5", "false"):
    case("run options", f"run.bootstrap={value}", f"run.bootstrap={value}", where=r"run\.bootstrap")
for value in ("0", "-3", "big", "2.0"):
    case(
        "run options",
        f"run.batch_size={value}",
        f"run.batch_size={value}",
        where=r"run\.batch_size",
    )
for value in ("-1", "x", "1e20", "99999999999"):
    case("run options", f"run.seed={value}", f"run.seed={value}", where=r"run\.seed")
for key in ("progress", "overwrite", "final"):
    for value in ("no", "yes", "1", "'true'"):
        case("run options", f"run.{key}={value}", f"run.{key}={value}", where=rf"run\.{key}")
for value in ("bogus", "true", "READ_WRITE"):
    case("run options", f"run.cache={value}", f"run.cache={value}", where=r"run\.cache")
case("run options", "run.cache_dir=5", "run.cache_dir=5", where=r"run\.cache_dir")
case("run options", "+run.limt", "+run.limt=3", where=r"run\.limt.*run\.limit")
case("run options", "+run.extra", "+run.extra=1", where=r"run\.extra")
case("run options", "run=5", "run=5", where=r"\brun\b")

# --- 2. app options: mode, view, task, roots -----------------------------------------------------
for value in ("bogus", "5", "RUN", "evaluate"):
    case("app options", f"mode={value}", f"mode={value}", where=r"mode")
for value in ("bogus", "1", "Correct", "../outside/dev", "correct,"):
    case(
        "app options",
        f"view={value}",
        "task=molp2s/gap",
        f"view='{value}'",
        where=r"view|molp2s/gap",
    )
for value in (
    "molp2s/gapp",
    "../../etc/passwd",
    "/etc/passwd",
    "molp2s",
    "cblue/cmeee-v3",
    "molp2s//gap",
    "./molp2s/gap",
    "''",
    "null",
):
    case("task name", f"task={value}", f"task={value}", where=r"task|no task")
case("app options", "roots.molp2s missing", "roots.molp2s={ws}/nope", where=r"/nope")
case(
    "app options",
    "roots.molp2s is a file",
    "roots.molp2s={ws}/afile",
    where=r"afile",
    setup=lambda ws: (ws / "afile").write_text("x"),
)
case("app options", "roots.molp2s=5", "roots.molp2s=5", where=r"roots\.molp2s")
case("app options", "+roots.bogus", "+roots.bogus=/tmp", where=r"roots\.bogus")

# --- 3. model.* options --------------------------------------------------------------------------
for value in ("x", "-1", "1.5", "true"):
    case(
        "model options",
        f"random seed={value}",
        "model=random",
        f"model.seed={value}",
        where=r"model\.seed",
    )
case("model options", "random +model.sed", "model=random", "+model.sed=1", where=r"model\.sed")
case("model options", "random label int", "model=random", "model.label=5", where=r"model\.label")
case("model options", "predictions without path", "model=predictions", where=r"model\.path")
case(
    "model options",
    "predictions path missing",
    "model=predictions",
    "model.path={ws}/missing.jsonl",
    where=r"missing\.jsonl",
)
case("model options", "baseline +model.path", "+model.path=x", where=r"model\.path")
case("model options", "baseline param typo", "+model.params.bogus=1", where=r"bogus|model\.params")
case("model options", "model.name bogus", "model.name=bogus", where=r"model\.name")
case("model options", "openai without model", "model=openai", where=r"model\.model")
for key, value in (
    ("temperature", "hot"),
    ("max_tokens", "0"),
    ("concurrency", "0"),
    ("timeout_s", "-1"),
    ("max_retries", "-1"),
    ("rate_limit", "0"),
    ("backoff.multiplier", "0.5"),
    ("stop_early.max_error_rate", "2"),
    ("stop_early.min_requests", "0"),
    ("top_p", "high"),
    ("seed", "x"),
    ("base_url", "5"),
):
    case(
        "model options",
        f"openai {key}={value}",
        "model=openai",
        "model.model=m",
        f"model.{key}={value}",
        where=rf"model\.{key}",
    )
case(
    "model options",
    "openai +api_base",
    "model=openai",
    "model.model=m",
    "+model.api_base=x",
    where=r"model\.api_base",
)
case(
    "model options",
    "openai +backoff typo",
    "model=openai",
    "model.model=m",
    "+model.backoff.initial=1",
    where=r"model\.backoff\.initial",
)
for key, value in (
    ("n_ctx", "10"),
    ("n_threads", "0"),
    ("startup_timeout_s", "0"),
    ("server_args", "5"),
):
    case(
        "model options",
        f"llama_cpp {key}={value}",
        "model=llama_cpp",
        f"model.{key}={value}",
        where=rf"model\.{key}",
    )

# --- 4. Hydra's own errors -----------------------------------------------------------------------
case("hydra", "unknown model option", "model=bogus", where=r"model=bogus.*baseline")
case("hydra", "unknown group", "modl=random", where=r"modl.*model")
case("hydra", "unknown launcher", "hydra/launcher=jobib", where=r"hydra/launcher")
case("hydra", "unknown top key", "bogusgroup=x", where=r"bogusgroup")
case("hydra", "unknown struct key", "run.limt=3", where=r"run\.limt.*run\.limit")
case("hydra", "unknown chunker", "chunker=bogus", where=r"chunker")
case("hydra", "bracket syntax", "task=[a", where=r"task=\[a")
case("hydra", "two equals", "a=b=c", where=r"a=b=c")
case("hydra", "unterminated quote", "task='x", where=r"task='x")
case("hydra", "broken interpolation", "run.limit=${", where=r"run\.limit")
case("hydra", "delete task", "~task", where=r"task")
case("hydra", "append existing", "+task=molp2s/gap", where=r"task")
case("hydra", "unknown interpolation", "view=${bogus}", where=r"bogus|view")
case("hydra", "unknown resolver", "view=${nope:x}", where=r"nope|view")
case(
    "hydra",
    "bad run dir interpolation",
    "hydra.run.dir=${oc.env:NOPE_NOT_SET}",
    own_dir=True,
    where=r"NOPE_NOT_SET|hydra\.run\.dir",
)
case("hydra", "unknown config name", "--config-name=bogus", where=r"bogus")
case("hydra", "sweep syntax in run", "task=glob(molp2s/*", where=r"glob")

# --- 5. secrets on the command line --------------------------------------------------------------
for arg in (
    "model.api_key=sk-abcdefghijklmnopqrstuvwx",
    "+model.params.token=abc123",
    "+model.params.password=hunter2",
    "+hf_token=x",
    "model.label=https://user:pw@example.org/v1",
    "view=sk-abcdefghijklmnopqrstuvwx",
    "model.label=${oc.env:MY_API_TOKEN}",
    "+model.params.q=Bearer abcdefghijklmnop",
):
    case("secrets", f"secret {arg}", arg, where=r"secret")


# --- 6. task entries (a user's folder) -----------------------------------------------------------
ENTRY = """\
defaults:
  - /task/_base/molp2s@_here_
  - _self_
name: mine/t
description: my task
data: [data/gap]
"""


def entry(text: str, name: str = "mine/t", more: dict[str, str] | None = None) -> Setup:
    def write(ws: Path) -> None:
        for rel, body in {name: text, **(more or {})}.items():
            path = ws / "ut" / f"{rel}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(body, bytes):
                path.write_bytes(body)
            else:
                path.write_text(body, encoding="utf-8")

    return write


def entry_case(
    id: str, text: str | bytes, where: str = r"t\.yaml:\d+", *extra: str, more: dict | None = None
) -> None:
    case(
        "task entry",
        id,
        "task=mine/t",
        *extra,
        where=where,
        setup=entry(text, more=more),
        env={"BENCHREG_TASKS_PATH": "{ws}/ut"},
    )


entry_case("malformed YAML", ENTRY + "metrics: [unclosed\n")
entry_case("tab indentation", ENTRY + "loader:\n\tname: molp2s\n")
entry_case("duplicate key", ENTRY + "description: again\n")
entry_case("duplicate nested key", ENTRY + "prompt:\n  renderer: molp2s\n  renderer: molp2s\n")
entry_case("invalid UTF-8", ENTRY.encode() + b"# \xff\xfe\n", where=r"t\.yaml")
entry_case("defaults includes itself", ENTRY.replace("_self_", "/task/mine/t@_here_\n  - _self_"))
entry_case(
    "defaults cycle",
    ENTRY.replace("/task/_base/molp2s", "/task/mine/u"),
    r"(t|u)\.yaml:\d+",
    more={"mine/u": "defaults:\n  - /task/mine/t@_here_\n  - _self_\nfamily: molp2s\n"},
)
BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} ["
    + ",".join([f"*{chr(96 + i)}"] * 9 if i else ['"lol"'] * 9)
    + "]\n"
    for i in range(9)
)
entry_case(
    "billion laughs", ENTRY + "x_bomb:\n" + "".join("  " + ln + "\n" for ln in BOMB.splitlines())
)
entry_case("recursive alias", ENTRY + "views: &v [correct, *v]\n")
entry_case("file too large", ENTRY + "# " + "x" * (1 << 20) + "\n", r"t\.yaml")
entry_case("oc.env interpolation", ENTRY.replace("my task", "${oc.env:HOME}"))
entry_case("now interpolation", ENTRY.replace("my task", "'${now:%Y}'"))
entry_case("unknown key", ENTRY + "bogus: 1\n")
entry_case("unknown nested key", ENTRY + "loader: {name: molp2s, parms: {}}\n")
entry_case("unknown loader", ENTRY + "loader: molp2z\n")
entry_case("unknown metric", ENTRY + "metrics: [{name: acuracy, primary: true}]\n")
entry_case("unknown parser", ENTRY + "parser: bogus\n")
entry_case("unknown answer schema", ENTRY + "answer_schema: bogus\n")
entry_case("unknown prediction reader", ENTRY + "predictions: bogus\n")
entry_case("unknown baseline", ENTRY + "baseline: bogus\n")
entry_case("unknown counter", ENTRY + "counts: bogus\n")
entry_case("unknown renderer", ENTRY + "prompt: {renderer: bogus, templates: {}}\n")
entry_case("unknown validator", ENTRY + "validators: [bogus]\n")
entry_case(
    "two primaries",
    ENTRY + "metrics: [{name: accuracy, primary: true},"
    " {name: accuracy, primary: true, label: a2}]\n",
)
entry_case("no primary", ENTRY + "metrics: [{name: accuracy}]\n")
entry_case("metrics not a list", ENTRY + "metrics: accuracy\n")
entry_case("metric ci bogus", ENTRY + "metrics: [{name: accuracy, primary: true, ci: maybe}]\n")
entry_case(
    "metric param typo", ENTRY + "metrics: [{name: accuracy, primary: true, params: {bogus: 1}}]\n"
)
entry_case(
    "defaults not a list",
    ENTRY.replace("defaults:\n  - /task/_base/molp2s@_here_\n  - _self_\n", "defaults: _self_\n"),
)
entry_case("defaults names no file", ENTRY.replace("_base/molp2s", "_base/molp2z"))
entry_case("defaults bad package", ENTRY.replace("@_here_", "@foo"))
entry_case("entry is a list", "- a\n- b\n", r"t\.yaml")
entry_case("entry is empty", "", r"t\.yaml")
entry_case("views not a list", ENTRY + "views: correct\n")
entry_case("default view unknown", ENTRY + "default_view: nope\n", r"t\.yaml|nope")
entry_case("check_smiles 'no'", ENTRY + "loader: {name: molp2s, params: {check_smiles: 'no'}}\n")
entry_case("check_smiles 1", ENTRY + "loader: {name: molp2s, params: {check_smiles: 1}}\n")
entry_case("check_smiles typo", ENTRY + "loader: {name: molp2s, params: {chek_smiles: true}}\n")
entry_case("loader params not a mapping", ENTRY + "loader: {name: molp2s, params: [1]}\n")
entry_case(
    "template missing",
    ENTRY + "prompt: {renderer: molp2s, templates: {user: nope.txt}}\n",
    r"nope\.txt",
)
entry_case(
    "template escapes",
    ENTRY + "prompt: {renderer: molp2s, templates: {user: ../../../../../../etc/passwd}}\n",
    r"etc/passwd",
)
entry_case(
    "data escapes with ..", ENTRY.replace("[data/gap]", "[../other_release]"), r"other_release"
)
entry_case("data absolute", ENTRY.replace("[data/gap]", "[/etc]"), r"/etc")
entry_case("data /etc/passwd", ENTRY.replace("[data/gap]", "[/etc/passwd]"), r"/etc/passwd")
entry_case("data two dirs", ENTRY.replace("[data/gap]", "[data/gap, data/dipole]"), r"mine/t")
entry_case("data missing dir", ENTRY.replace("[data/gap]", "[data/nope]"), r"data/nope")
entry_case(
    "view escapes",
    ENTRY + "views: [correct, ../../outside/dev]\n",
    r"outside",
    "view=../../outside/dev",
)
entry_case("data not a list", ENTRY.replace("[data/gap]", "{a: 1}"))
CBLUE = """\
defaults:
  - /task/_base/cblue@_here_
  - _self_
name: mine/t
description: my task
loader: {name: cblue, params: {task: CMeEE-V2}}
answer_schema: cblue_entities
parser: cblue_cmeee_v2
metrics: [{name: cblue_micro_prf, primary: true}]
"""
entry_case(
    "cblue split escapes",
    CBLUE.replace("task: CMeEE-V2", "task: CMeEE-V2, split: ../../outside/dev"),
    r"outside",
)
entry_case("cblue unknown task", CBLUE.replace("CMeEE-V2", "CMeEE-V9"), r"CMeEE-V9|mine/t")
entry_case("cblue task int", CBLUE.replace("CMeEE-V2", "5"), r"t\.yaml:\d+")
entry_case("cblue split bool", CBLUE.replace("task: CMeEE-V2", "task: CMeEE-V2, split: true"))
entry_case("cblue loader typo", CBLUE.replace("task: CMeEE-V2", "task: CMeEE-V2, splt: dev"))
RMC = """\
defaults:
  - /task/_base/reaction_mc@_here_
  - _self_
name: mine/t
description: my task
loader: {name: reaction_mc_questions, params: {question_type: single_varying}}
data: [multiple_choice_single_varying.json]
prompt: {renderer: reaction_mc, templates: {user: prompt_single_varying.txt}}
"""
entry_case("reaction_mc question_type int", RMC.replace("single_varying}", "5}"))
entry_case(
    "reaction_mc data escapes",
    RMC.replace("[multiple_choice", "[../multiple_choice"),
    r"\.\./multiple_choice",
)
entry_case(
    "reaction_mc missing file", RMC.replace("single_varying.json", "nope.json"), r"nope\.json"
)


# --- 7. data files (a corrupted copy of the embedded sample) -------------------------------------
def molp2s_data(mutate: Callable[[Path], None]) -> Setup:
    def write(ws: Path) -> None:
        root = copy_sample("molp2s", ws / "molp2s")
        mutate(root / "data" / "gap")

    return write


def edit_line(
    file: str, number: int, change: Callable[[dict], dict | str]
) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        path = folder / file
        lines = path.read_text(encoding="utf-8").splitlines()
        value = change(json.loads(lines[number - 1]))
        lines[number - 1] = value if isinstance(value, str) else json.dumps(value)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    return mutate


def data_case(id: str, mutate: Callable[[Path], None], where: str, *extra: str) -> None:
    case(
        "data file",
        id,
        "task=molp2s/gap",
        "roots.molp2s={ws}/molp2s",
        *extra,
        where=where,
        setup=molp2s_data(mutate),
    )


data_case(
    "malformed JSON line", edit_line("correct.jsonl", 2, lambda r: "{not json"), r"correct\.jsonl:2"
)
data_case("JSON list line", edit_line("correct.jsonl", 3, lambda r: "[1, 2]"), r"correct\.jsonl:3")
data_case(
    "missing field",
    edit_line("correct.jsonl", 1, lambda r: {k: v for k, v in r.items() if k != "masked_smiles"}),
    r"correct\.jsonl:1",
)
data_case(
    "candidates not a list",
    edit_line("correct.jsonl", 1, lambda r: {**r, "candidate_completed_smiles": "C"}),
    r"correct\.jsonl:1",
)
data_case(
    "bad candidate SMILES",
    edit_line("correct.jsonl", 1, lambda r: {**r, "candidate_completed_smiles": ["C1CC", "C"]}),
    r"correct\.jsonl:1",
)
data_case(
    "bad masked SMILES",
    edit_line("correct.jsonl", 1, lambda r: {**r, "masked_smiles": "[*]c1ccc("}),
    r"correct\.jsonl:1",
)
data_case(
    "duplicate record id",
    edit_line("correct.jsonl", 2, lambda r: {**r, "record_id": "mp2s-0001"}),
    r"correct\.jsonl:2",
)
data_case(
    "label out of range",
    edit_line("correct.labels.jsonl", 1, lambda r: {**r, "label": 9}),
    r"correct\.labels\.jsonl:1|mp2s-0001",
)
data_case(
    "label negative",
    edit_line("correct.labels.jsonl", 1, lambda r: {**r, "label": -1}),
    r"correct\.labels\.jsonl:1|mp2s-0001",
)
data_case(
    "label string",
    edit_line("correct.labels.jsonl", 1, lambda r: {**r, "label": "1"}),
    r"correct\.labels\.jsonl:1",
)
data_case(
    "label bool",
    edit_line("correct.labels.jsonl", 1, lambda r: {**r, "label": True}),
    r"correct\.labels\.jsonl:1",
)
data_case(
    "label float",
    edit_line("correct.labels.jsonl", 1, lambda r: {**r, "label": 1.5}),
    r"correct\.labels\.jsonl:1",
)
data_case(
    "label for unknown record",
    edit_line("correct.labels.jsonl", 1, lambda r: {**r, "record_id": "ghost"}),
    r"ghost|labels",
)


def _truncate_labels(folder: Path) -> None:
    path = folder / "correct.labels.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[1:]) + "\n")


data_case("missing label", _truncate_labels, r"mp2s-0001|labels")
data_case(
    "non-UTF-8 line",
    lambda f: (f / "correct.jsonl").write_bytes(
        (f / "correct.jsonl").read_bytes() + b'{"record_id": "\xff"}\n'
    ),
    r"correct\.jsonl:\d+",
)
data_case(
    "data file is a folder",
    lambda f: ((f / "correct.jsonl").unlink(), (f / "correct.jsonl").mkdir()),
    r"correct\.jsonl",
)
data_case("data file missing", lambda f: (f / "correct.jsonl").unlink(), r"correct\.jsonl")
data_case(
    "labels missing", lambda f: (f / "correct.labels.jsonl").unlink(), r"correct\.labels\.jsonl"
)
data_case("empty data file", lambda f: (f / "correct.jsonl").write_text(""), r"molp2s|gap")
data_case(
    "symlink out of the root",
    lambda f: ((f / "shuffled.jsonl").unlink(), (f / "shuffled.jsonl").symlink_to("/etc/passwd")),
    r"shuffled\.jsonl",
    "view=shuffled",
)
data_case(
    "data dir symlink out",
    lambda f: (
        __import__("shutil").rmtree(f),
        f.symlink_to(f.parent.parent.parent / "outside"),
        (f.parent.parent.parent / "outside").mkdir(),
    ),
    r"data/gap",
)


def cblue_case(id: str, mutate: Callable[[Path], None], where: str, *extra: str) -> None:
    def write(ws: Path) -> None:
        mutate(copy_sample("cblue", ws / "cblue"))

    case(
        "data file",
        id,
        "task=cblue/CMeEE-V2",
        "roots.cblue={ws}/cblue",
        *extra,
        where=where,
        setup=write,
    )


cblue_case("cblue split file missing", lambda r: (r / "dev.json").unlink(), r"dev\.json|cblue")
cblue_case(
    "cblue malformed line",
    lambda r: (r / "dev.json").write_text(
        (r / "dev.json").read_text(encoding="utf-8") + "{oops\n", encoding="utf-8"
    ),
    r"dev\.json:\d+",
)
cblue_case(
    "cblue split is a folder",
    lambda r: ((r / "dev.json").unlink(), (r / "dev.json").mkdir()),
    r"dev\.json",
)
cblue_case("cblue view escapes", lambda r: None, r"view|cblue", "view=../outside")


def rmc_case(id: str, mutate: Callable[[Path], None], where: str) -> None:
    def write(ws: Path) -> None:
        mutate(copy_sample("reaction_mc", ws / "rmc") / "multiple_choice_single_varying.json")

    case(
        "data file",
        id,
        "task=reaction_mc/single_varying",
        "roots.reaction_mc={ws}/rmc",
        where=where,
        setup=write,
    )


rmc_case(
    "reaction_mc malformed JSON",
    lambda p: p.write_text("[{oops"),
    r"multiple_choice_single_varying\.json",
)
rmc_case(
    "reaction_mc not a list",
    lambda p: p.write_text('{"a": 1}'),
    r"multiple_choice_single_varying\.json",
)
rmc_case(
    "reaction_mc missing field",
    lambda p: p.write_text(
        json.dumps(
            [{k: v for k, v in q.items() if k != "input"} for q in json.loads(p.read_text())]
        )
    ),
    r"multiple_choice_single_varying\.json",
)
rmc_case(
    "reaction_mc duplicate key",
    lambda p: p.write_text('[{"id": "a", "id": "b"}]'),
    r"multiple_choice_single_varying\.json:1",
)
rmc_case("reaction_mc file missing", lambda p: p.unlink(), r"multiple_choice_single_varying")


# --- 8. predictions files ------------------------------------------------------------------------
def preds(text: str | bytes, name: str = "preds.jsonl") -> Setup:
    def write(ws: Path) -> None:
        path = ws / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    return write


def pred_case(
    id: str,
    text: str | bytes,
    where: str = r"preds\.jsonl",
    task: str = "molp2s/gap",
    name: str = "preds.jsonl",
) -> None:
    case(
        "predictions file",
        id,
        f"task={task}",
        "model=predictions",
        f"model.path={{ws}}/{name}",
        where=where,
        setup=preds(text, name),
    )


OTHER = "".join(
    json.dumps({"record_id": f"other-{i}", "selected_candidate_index": 0}) + "\n" for i in range(5)
)
pred_case("wrong split ids", OTHER)
pred_case("empty file", "")
pred_case("blank lines only", "\n\n  \n")
pred_case("all lines malformed", "{oops\nnot json\n")
pred_case("not JSON at all", "hello world\n")
pred_case("not UTF-8", b"\xff\xfe\x00\x01\n")
pred_case(
    "duplicate record",
    json.dumps({"record_id": "mp2s-0001", "selected_candidate_index": 0})
    + "\n"
    + json.dumps({"record_id": "mp2s-0001", "selected_candidate_index": 1})
    + "\n",
    r"preds\.jsonl:2",
)
pred_case("objects without ids", '{"selected_candidate_index": 0}\n{"foo": 1}\n')
pred_case(
    "cblue wrong format", "[1, 2, 3]", r"preds\.json", task="cblue/CMeEE-V2", name="preds.json"
)
pred_case("cblue empty", "", r"preds\.json", task="cblue/CMeEE-V2", name="preds.json")
case(
    "predictions file",
    "predictions path is a folder",
    "model=predictions",
    "model.path={ws}/pdir",
    where=r"pdir",
    setup=lambda ws: (ws / "pdir").mkdir(),
)

# --- 9. output folders ---------------------------------------------------------------------------
case(
    "output folder",
    "run dir is a file",
    "hydra.run.dir={ws}/afile",
    own_dir=True,
    where=r"afile",
    setup=lambda ws: (ws / "afile").write_text("x"),
)
case(
    "output folder",
    "run dir under a file",
    "hydra.run.dir={ws}/afile/sub",
    own_dir=True,
    where=r"afile",
    setup=lambda ws: (ws / "afile").write_text("x"),
)
case("output folder", "folder of another finished run", "model=random", where=r"prior")
case(
    "output folder",
    "folder with foreign files",
    "hydra.run.dir={ws}/mine",
    own_dir=True,
    where=r"mine",
    setup=lambda ws: ((ws / "mine").mkdir(), (ws / "mine" / "notes.txt").write_text("mine")),
)
if os.geteuid() != 0:  # root writes anywhere
    case(
        "output folder",
        "read-only folder",
        "hydra.run.dir={ws}/ro/run",
        own_dir=True,
        where=r"ro",
        setup=lambda ws: ((ws / "ro").mkdir(), os.chmod(ws / "ro", 0o500)),
    )

# --- 10. analyze / tasks inputs ------------------------------------------------------------------
case("analyze", "analyze a missing folder", "analyze", "{ws}/nope", where=r"nope")
case(
    "analyze",
    "analyze a file",
    "analyze",
    "{ws}/afile",
    where=r"afile",
    setup=lambda ws: (ws / "afile").write_text("x"),
)
# a traceback today: benchreg/app/callbacks.py (E12's) reads metrics.json with json.loads; xfail
case(
    "analyze",
    "analyze corrupt metrics.json",
    "analyze",
    "{ws}/sweep",
    where=r"metrics\.json",
    setup=lambda ws: (
        (ws / "sweep" / "0_job").mkdir(parents=True),
        (ws / "sweep" / "0_job" / "metrics.json").write_text("{oops"),
    ),
)
case("analyze", "tasks bad argument", "tasks", "bogus=1", where=r"bogus")
