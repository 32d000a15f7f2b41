"""The Hydra app layer (the only place that imports Hydra)."""
