"""What an export did: the jobs it logged (with the tracking run's id) and those it skipped."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchreg.app.tracking._records import JobExport


@dataclass
class Outcome:
    target: str  # mlflow | wandb
    where: str  # the store, for the closing line
    logged: list[tuple[JobExport, str]] = field(default_factory=list)
    skipped: list[JobExport] = field(default_factory=list)

    def lines(self) -> list[str]:
        """A line per job logged, then the totals (`skipped N already exported`)."""
        lines = [
            f"logged {record.folder.name} -> {self.target} run {run_id} ({record.status})"
            for record, run_id in self.logged
        ]
        held_back = sum(1 for record, _ in self.logged if record.status != "ok")
        note = f" ({held_back} without metric values: not a result)" if held_back else ""
        lines.append(
            f"{self.target}: logged {len(self.logged)}{note}, skipped {len(self.skipped)} "
            f"already exported; {self.where}"
        )
        return lines
