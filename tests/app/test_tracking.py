"""`python -m benchreg export mlflow|wandb`: one tracking run per job, read back with MLflow's own
client from a local sqlite or file store and from W&B's offline run files; exporting twice adds
nothing; incomplete runs carry no metric values; bad input is one line; no secret leaves."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchreg.app import commands
from benchreg.app.tracking._records import find_run_folders, read_export
from tests.app.conftest import CLI, run_cli

PLANTED = "sk-planted0123456789abcdefSECRET"  # an API key in the exporting process's environment
WANDB_BLOCK = 32768  # W&B's run log is a LevelDB-style log of 32 KiB blocks


def need(module: str) -> None:
    """Skip when the tracking extra is missing; under CI=true it must be installed."""
    if importlib.util.find_spec(module) is not None:
        return
    reason = f"{module} is not installed (pip install 'benchreg[tracking]')"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; CI must install it")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A sweep of 4 jobs (2 views x 2 models) and a single run of the embedded MolP2S sample."""
    root = tmp_path_factory.mktemp("made")
    sweep, single = root / "sweep", root / "single"
    proc = run_cli(
        "-m",
        "task=molp2s/gap",
        "view=counterfactual,correct",
        "model=baseline,random",
        f"hydra.sweep.dir={sweep}",
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr[-1500:]
    proc = run_cli("task=molp2s/gap", f"hydra.run.dir={single}", cwd=root)
    assert proc.returncode == 0, proc.stderr[-1500:]
    return {"sweep": sweep, "single": single}


@pytest.fixture
def restored_environ() -> Iterator[None]:
    """The export sets variables that keep the tracking clients quiet; undo them per test."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def copy_job(made: dict[str, Path], tmp_path: Path, **changes: Any) -> Path:
    """A copy of the single run with ``changes`` made to its metrics.json."""
    folder = tmp_path / "run"
    shutil.copytree(made["single"], folder)
    record = json.loads((folder / "metrics.json").read_text())
    (folder / "metrics.json").write_text(json.dumps({**record, **changes}))
    return folder


def export(*args: str | Path) -> int:
    return commands.main(["export", *map(str, args)])


# --- what one job exports (no tracking package needed) --------------------------------------------


def test_a_job_exports_params_metrics_with_ci_and_its_files(made: dict[str, Path]) -> None:
    folders = find_run_folders([made["sweep"], made["single"]]).folders
    assert len(folders) == 5
    record = read_export(folders[0])
    assert record.status == "ok" and len(record.fingerprint) == 64
    params = record.params
    assert (params["task"], params["view"]) == ("molp2s/gap", "counterfactual")
    assert params["model_id"] == "baseline:molp2s_rdkit" and params["benchreg_version"]
    assert len(params["data_sha256"]) == 64 and params["predictions_sha256"] == ""
    metric = json.loads((folders[0] / "metrics.json").read_text())["metrics"]["accuracy"]
    assert record.metrics["accuracy"] == metric["value"]
    assert [record.metrics["accuracy.ci95_low"], record.metrics["accuracy.ci95_high"]] == metric[
        "ci95"
    ]
    assert record.metrics["accuracy.n"] == metric["n"]
    assert record.metrics["accuracy.denominator"] == metric["denominator"]
    names = sorted(path.name for path, _ in record.artifacts)
    assert names == ["index.html", "metrics.json", "provenance.json", "report.md"]


def test_a_folder_holding_runs_gives_each_run_once(made: dict[str, Path]) -> None:
    root = made["sweep"].parent  # holds the sweep and the single run
    found = find_run_folders([root, made["sweep"], made["single"]]).folders
    assert len(found) == len(set(found)) == 5


def test_incomplete_void_and_demonstration_runs_carry_no_metric_values(
    made: dict[str, Path], tmp_path: Path
) -> None:
    incomplete = read_export(copy_job(made, tmp_path / "a", complete=False, incomplete={"of": 16}))
    assert incomplete.status == "incomplete" and incomplete.metrics == {}
    assert incomplete.tags["benchreg.status"] == "incomplete"
    void = read_export(copy_job(made, tmp_path / "b", benchmark_result=False, not_a_result="demo"))
    assert void.status == "not_a_result" and void.metrics == {}
    assert void.tags["benchreg.not_a_result"] == "demo"
    counts = {"hits": 4, "tasks": 16, "demonstration_entries": 16}
    demo = read_export(copy_job(made, tmp_path / "c", counts=counts))
    assert demo.status == "demonstration" and demo.metrics == {}


@pytest.mark.parametrize("case", ["missing", "plain folder", "damaged", "secret in a file"])
def test_bad_input_is_one_line(
    made: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    folder = tmp_path / "x"
    if case == "plain folder":
        folder.mkdir()
    elif case == "damaged":
        folder = copy_job(made, tmp_path)
        (folder / "metrics.json").write_text('{"task": "molp2s/gap", "model": ')
    elif case == "secret in a file":
        folder = copy_job(made, tmp_path, model=f"mine {PLANTED}")
    assert export("mlflow", folder, "--tracking-uri", f"sqlite:///{tmp_path}/m.db") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert str(folder) in err
    assert not (tmp_path / "m.db").exists()  # refused before anything was logged


def test_a_missing_extra_is_one_line_naming_the_install(
    made: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    restored_environ: None,
) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow fails
    monkeypatch.setitem(sys.modules, "mlflow.tracking", None)
    assert export("mlflow", made["single"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'benchreg[tracking]'" in err


def test_options_of_the_other_target_are_refused(
    made: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert export("wandb", made["single"], "--experiment", "x") == 2
    assert "--experiment is an option of export mlflow" in capsys.readouterr().err


# --- MLflow, read back with its own client --------------------------------------------------------


def mlflow_runs(uri: str, experiment: str = "benchreg") -> list[Any]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    return client.search_runs([found.experiment_id]) if found else []


def test_mlflow_holds_one_run_per_job_and_a_second_export_adds_none(
    made: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    restored_environ: None,
) -> None:
    need("mlflow")
    uri = f"sqlite:///{tmp_path}/store/mlflow.db"
    assert export("mlflow", made["sweep"], made["single"], "--tracking-uri", uri) == 0
    assert "mlflow: logged 5, skipped 0 already exported" in capsys.readouterr().out
    runs = mlflow_runs(uri)
    assert len(runs) == 5
    jobs = {run.data.tags["benchreg.job"]: run for run in runs}
    run = jobs["000_molp2s-gap_counterfactual_baseline"]
    metrics = json.loads(
        (made["sweep"] / run.data.tags["benchreg.job"] / "metrics.json").read_text()
    )
    accuracy = metrics["metrics"]["accuracy"]
    assert run.data.metrics["accuracy"] == accuracy["value"]
    assert run.data.metrics["accuracy.ci95_low"] == accuracy["ci95"][0]
    assert run.data.metrics["accuracy.ci95_high"] == accuracy["ci95"][1]
    assert run.data.metrics["accuracy.n"] == accuracy["n"] == 20
    assert run.data.params["model_id"] == "baseline:molp2s_rdkit"
    assert run.data.tags["benchreg.status"] == "ok" and run.info.status == "FINISHED"
    from mlflow.tracking import MlflowClient

    stored = {a.path for a in MlflowClient(tracking_uri=uri).list_artifacts(run.info.run_id)}
    assert {"metrics.json", "provenance.json", "report"} <= stored
    assert (tmp_path / "store" / "mlartifacts").is_dir()  # beside the database, not here

    assert export("mlflow", made["sweep"], made["single"], "--tracking-uri", uri) == 0
    assert "mlflow: logged 0, skipped 5 already exported" in capsys.readouterr().out
    assert len(mlflow_runs(uri)) == 5


def test_a_server_that_does_not_answer_is_one_line_in_seconds(
    made: dict[str, Path], capsys: pytest.CaptureFixture[str], restored_environ: None
) -> None:
    need("mlflow")
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    assert export("mlflow", made["single"], "--tracking-uri", f"http://127.0.0.1:{port}") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the MLflow store did not take the export" in err
    assert time.monotonic() - started < 30


def test_mlflow_tags_an_incomplete_run_and_logs_no_values(
    made: dict[str, Path], tmp_path: Path, restored_environ: None
) -> None:
    need("mlflow")
    folder = copy_job(made, tmp_path, complete=False, incomplete={"errors": 3, "of": 16})
    uri = (tmp_path / "files").as_uri()  # MLflow's file store, allowed when named
    assert export("mlflow", folder, "--tracking-uri", uri, "--experiment", "lab") == 0
    (run,) = mlflow_runs(uri, "lab")
    assert run.data.tags["benchreg.status"] == "incomplete"
    assert json.loads(run.data.tags["benchreg.incomplete"]) == {"errors": 3, "of": 16}
    assert run.data.metrics == {} and run.data.params["task"] == "molp2s/gap"


def test_nothing_leaves_the_mlflow_export(
    made: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    restored_environ: None,
) -> None:
    """No planted secret in the store, and no connection but to local sockets."""
    need("mlflow")
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.setenv("MY_SERVER_TOKEN", PLANTED)
    connections: list[Any] = []
    connect = socket.socket.connect

    def record_connect(self: socket.socket, address: Any) -> Any:
        if self.family != socket.AF_UNIX:
            connections.append(address)
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", record_connect)
    store = tmp_path / "store"
    assert export("mlflow", made["sweep"], "--tracking-uri", f"sqlite:///{store}/m.db") == 0
    assert connections == []
    assert_nowhere_under(store, PLANTED)


def assert_nowhere_under(folder: Path, secret: str) -> None:
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert files
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


# --- W&B offline runs, read from their files ------------------------------------------------------


def wandb_env(tmp_path: Path) -> dict[str, str]:
    """No login, no host: offline mode, and W&B's own folders kept in the test's folder."""
    home = tmp_path / "wandb-home"
    return {
        "WANDB_MODE": "offline",
        "WANDB_CONFIG_DIR": str(home / "config"),
        "WANDB_CACHE_DIR": str(home / "cache"),
        "WANDB_DATA_DIR": str(home / "data"),
        "OPENAI_API_KEY": PLANTED,
    }


def wandb_records(run_log: Path) -> Iterator[Any]:
    """The protobuf records of an offline run's `.wandb` log (what `wandb sync` uploads)."""
    from wandb.proto import wandb_internal_pb2

    data = run_log.read_bytes()
    assert data[:4] == b":W&B"
    position, pending = 7, b""
    while position + 7 <= len(data):
        if WANDB_BLOCK - position % WANDB_BLOCK < 7:  # a block's tail too short for a header
            position += WANDB_BLOCK - position % WANDB_BLOCK
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        if kind == 0:  # zero padding: the writer flushed, the next record starts a block
            position += WANDB_BLOCK - position % WANDB_BLOCK
            continue
        pending += data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (1, 4):  # a full record, or the last part of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            yield record


def offline_run(folder: Path) -> dict[str, Any]:
    """config, tags and summary of one offline run folder."""
    (run_log,) = folder.glob("run-*.wandb")
    found: dict[str, Any] = {"config": {}, "summary": {}, "tags": []}
    for record in wandb_records(run_log):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            found["tags"] = list(record.run.tags)
            found["config"] |= {
                item_key(u): json.loads(u.value_json) for u in record.run.config.update
            }
        elif kind == "summary":
            found["summary"] |= {
                item_key(u): json.loads(u.value_json) for u in record.summary.update
            }
    return found


def item_key(item: Any) -> str:
    return item.key or "/".join(item.nested_key)


@pytest.mark.slow
def test_wandb_offline_runs_hold_each_job_once(made: dict[str, Path], tmp_path: Path) -> None:
    need("wandb")
    out = tmp_path / "wb"
    args = ("export", "wandb", str(made["sweep"]), str(made["single"]), "--dir", str(out))
    proc = run_cli(*args, cwd=tmp_path, env=wandb_env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert "wandb: logged 5, skipped 0 already exported" in proc.stdout
    folders = sorted((out / "wandb").glob("offline-run-*"))
    assert len(folders) == 5
    runs = [offline_run(folder) for folder in folders]
    by_job = {run["config"]["benchreg.job"]: run for run in runs}
    run = by_job["000_molp2s-gap_counterfactual_baseline"]
    accuracy = json.loads(
        (made["sweep"] / "000_molp2s-gap_counterfactual_baseline" / "metrics.json").read_text()
    )["metrics"]["accuracy"]
    assert run["summary"]["accuracy"] == accuracy["value"]
    assert [run["summary"]["accuracy.ci95_low"], run["summary"]["accuracy.ci95_high"]] == accuracy[
        "ci95"
    ]
    assert run["config"]["model_id"] == "baseline:molp2s_rdkit"
    assert run["tags"] == ["benchreg", "ok"]
    assert (folders[0] / "files" / "metrics.json").is_file()

    again = run_cli(*args, cwd=tmp_path, env=wandb_env(tmp_path))
    assert "wandb: logged 0, skipped 5 already exported" in again.stdout, again.stderr[-800:]
    assert len(list((out / "wandb").glob("offline-run-*"))) == 5
    assert_nowhere_under(tmp_path, PLANTED)  # the runs, and W&B's own logs and caches


# --- the sweep hook -------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_sweep_hook_exports_each_job_as_it_ends(tmp_path: Path) -> None:
    need("mlflow")
    uri = f"sqlite:///{tmp_path}/store/mlflow.db"
    proc = run_cli(
        "-m",
        "task=molp2s/gap",
        "view=counterfactual,correct",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "hydra/callbacks=export_mlflow",
        f"hydra.callbacks.export_mlflow.tracking_uri={uri}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-1500:]
    runs = mlflow_runs(uri)
    assert sorted(run.data.tags["benchreg.view"] for run in runs) == ["correct", "counterfactual"]
    assert all("accuracy.ci95_high" in run.data.metrics for run in runs)
    later = run_cli(
        "export", "mlflow", str(tmp_path / "sweep"), "--tracking-uri", uri, cwd=tmp_path
    )
    assert "logged 0, skipped 2 already exported" in later.stdout, later.stderr[-800:]


def test_the_hook_never_fails_a_job(
    made: dict[str, Path], monkeypatch: pytest.MonkeyPatch, restored_environ: None
) -> None:
    """An export that cannot run (here: the extra is missing) is one error line; the job stands."""
    from loguru import logger
    from omegaconf import OmegaConf

    from benchreg.app.tracking.hook import ExportEachJob

    monkeypatch.setitem(sys.modules, "mlflow", None)
    monkeypatch.setitem(sys.modules, "mlflow.tracking", None)
    config = OmegaConf.create({"hydra": {"runtime": {"output_dir": str(made["single"])}}})
    said: list[str] = []
    handler = logger.add(said.append, format="{level} {message}")
    try:
        ExportEachJob(target="mlflow").on_job_end(config, job_return=None)
    finally:
        logger.remove(handler)
    assert len(said) == 1 and said[0].startswith("ERROR export mlflow of single: ")
    assert "pip install 'benchreg[tracking]'" in said[0]


@pytest.mark.slow
def test_parallel_exports_to_one_new_store_both_land(made: dict[str, Path], tmp_path: Path) -> None:
    """The jobs of a parallel sweep export at the same time: the store is created once."""
    need("mlflow")
    uri = f"sqlite:///{tmp_path}/store/mlflow.db"
    procs = [
        subprocess.Popen(
            [*CLI, "export", "mlflow", str(folder), "--tracking-uri", uri],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for folder in (made["sweep"], made["single"])
    ]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err[-800:] for _, err in outputs]
    assert len(mlflow_runs(uri)) == 5
