"""b-2 retrieval: six modalities (pdf, image, ui_screenshot, video, code, conversation) of
multimodal memory retrieval, per spec 004 (../shared/specs/004_*.txt).

Components: loader `retrieval` (loader.py, records.py, manifest.py), answer schema
`retrieval_results` (answer.py), parser `retrieval_json` (parser.py), prediction reader
`retrieval_run` (predictions.py: JSON Lines or TREC run + atoms), resolver `retrieval_regions`
(resolver.py, overlap.py), counter `retrieval` (metrics.py; the metrics are the core's ranking
metrics, benchreg.core.ranking), prompt renderer `retrieval` (prompts.py), baseline `bm25`
(baseline.py, bm25.py, chunkers.py, corpus.py), the position-only floors beside every score
(floors.py, registered in `benchreg.core.floors.floor_makers`), analysis
`retrieval_modalities` (analysis.py),
validator `retrieval_sets` (validators.py, regions.py, times.py, annotations.py: the registry
of gold annotations); importers of the third-party sources (importers/, registered in
`registry.importers`, imported with the other component modules); the atoms and queries export
for one's own retriever (export.py) and the abstention threshold chosen on dev (abstention.py).
"""

import benchreg.core.ranking  # noqa: F401  (registers the ranking metrics)
from benchreg.core.registry import register_family

register_family(__name__, __file__, release_prompts="prompts", packages=("bm25s", "pypdf"))

