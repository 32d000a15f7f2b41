"""The optional tracking packages: imported only when an export runs (they take a second or more
to import), with every call home they would make switched off first."""

from __future__ import annotations

import importlib
import logging
import os
import warnings
from types import ModuleType

from benchreg.core.errors import BenchregError

INSTALL_HINT = "pip install 'benchreg[tracking]'"
# set before the import: MLflow's usage telemetry and W&B's error reports would reach their hosts
NO_CALLS_HOME = {
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "WANDB_ERROR_REPORTING": "false",
    "WANDB_DISABLE_GIT": "true",
    "WANDB_DISABLE_CODE": "true",
    "WANDB_SILENT": "true",
}
CHATTY_LOGGERS = ("mlflow", "alembic", "wandb")


def import_extra(module: str, package: str) -> ModuleType:
    """``module`` of the tracking extra, or a one-line :class:`BenchregError` saying what to
    install."""
    os.environ.update(NO_CALLS_HOME)
    warnings.filterwarnings("ignore", module=r"(mlflow|sqlalchemy|alembic|wandb|pydantic)(\.|$)")
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        raise BenchregError(
            f"exporting needs the {package} package, which is not installed "
            f"({type(exc).__name__}: {exc})",
            fix=INSTALL_HINT,
        ) from None
    for name in CHATTY_LOGGERS:  # after the import: MLflow sets its loggers' levels there
        logging.getLogger(name).setLevel(logging.WARNING)
    return imported
