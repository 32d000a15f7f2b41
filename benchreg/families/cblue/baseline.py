"""The default offline system: a trivial, clearly labelled baseline (no model).

Classification: the first answer option of the prompt, read as model text would be (or, with
`labels: empty`, the empty answer, which scores as the task's first official label). Extraction:
no items. MedDG: an empty reply. IMCS-V2-MRG: an empty report. It is the floor a real system has
to beat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.types import Sample
from benchreg.families.cblue.catalogue import task_of_entry
from benchreg.families.cblue.parsers import parse_text


@registry.baselines.register("cblue_trivial")
def make_trivial(ctx: Any, *, labels: str = "first_option") -> Callable[[Sample], Any]:
    if labels not in ("first_option", "empty"):
        raise BenchregError(
            f"baseline cblue_trivial: unknown labels={labels!r}",
            fix="use labels=first_option or labels=empty",
        )
    info = task_of_entry(ctx.spec.name, dict(ctx.spec.loader.params))
    if info.kind != "classification":
        empty = info.empty_answer()
        return lambda sample: type(empty)()

    def first_option(sample: Sample) -> str:
        choices = sample.input.get("answer_choices") or []
        if not choices or labels == "empty":
            return ""
        return parse_text(info.name, str(choices[0]), sample)  # CHIP-STS: 相同 -> 是的

    return first_option
