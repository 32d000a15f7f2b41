"""The sweep hook: export each job to MLflow or W&B as it ends.

    python -m benchreg -m task=... hydra/callbacks=export_mlflow
        hydra.callbacks.export_mlflow.tracking_uri=sqlite:///runs.db  (one command line)

(`conf/hydra/callbacks/export_mlflow.yaml` and `export_wandb.yaml` name this callback and its
options.) A job is exported once its outputs are written (an incomplete one tagged so); a
failed job has nothing to export. An export that fails is one error line: the sweep and its
results go on, and `python -m benchreg export ...` on the sweep folder later logs what is
missing (jobs exported already are skipped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from loguru import logger
from omegaconf import DictConfig

from benchreg.app.tracking import Destination, export_records
from benchreg.app.tracking._records import read_export
from benchreg.core.errors import BenchregError
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE


class ExportEachJob(Callback):
    def __init__(
        self,
        target: str = "mlflow",
        tracking_uri: str | None = None,
        experiment: str | None = None,
        project: str | None = None,
        dir: str | None = None,
    ) -> None:
        self.destination = Destination(
            target=target,
            tracking_uri=tracking_uri,
            experiment=experiment,
            project=project,
            dir=Path(dir) if dir else None,
        )

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        folder = Path(str(config.hydra.runtime.output_dir))
        if (folder / ERROR_FILE).is_file() or not (folder / METRICS_FILE).is_file():
            return  # failed, or a mode that scores nothing (validate, prompts)
        try:
            outcome = export_records([read_export(folder)], self.destination)
        except BenchregError as exc:
            logger.error(f"export {self.destination.target} of {folder.name}: {exc.message}")
            return
        except Exception as exc:  # the job's results stand whatever the tracking store says
            logger.error(
                f"export {self.destination.target} of {folder.name} failed "
                f"({type(exc).__name__}: {exc}); export it later: python -m benchreg export "
                f"{self.destination.target} {folder}"
            )
            return
        for line in outcome.lines()[:-1] or outcome.lines()[-1:]:
            logger.info(line)
