"""The default offline system: a trivial, clearly labelled baseline (no model).

Classification: the first answer option of the prompt, read by the task's parser as model text
would be (or, with `labels: empty`, the empty answer, which scores as the task's first official
label). Extraction: no items. MedDG: an empty reply. IMCS-V2-MRG: an empty report. It is the floor
a real system has to beat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import SystemContext
from benchreg.core.types import Sample
from benchreg.families.cblue.catalogue import task_of_params


@registry.baselines.register("cblue_trivial")
def make_trivial(ctx: SystemContext, *, labels: str = "first_option") -> Callable[[Sample], Any]:
    if labels not in ("first_option", "empty"):
        raise BenchregError(
            f"baseline cblue_trivial: unknown labels={labels!r}",
            fix="use labels=first_option or labels=empty",
        )
    task = ctx.task
    info = task_of_params(task.loader.params, where=f"task entry {task.name}")
    if info.kind != "classification":
        empty = info.empty_answer()
        return lambda sample: type(empty)()
    parser = task.parser
    if parser is None:
        raise BenchregError(f"task entry {task.name} names no parser", fix="add `parser:`")

    def first_option(sample: Sample) -> str:
        choices = sample.input.get("answer_choices") or []
        if not choices or labels == "empty" or not str(choices[0]).strip():
            return ""
        return str(parser(str(choices[0]), sample))  # CHIP-STS: 相同 -> 是的

    return first_option
