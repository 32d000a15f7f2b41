"""Benchmark families. Each sub-package registers its components when imported; the families are
listed as entry points of the group ``benchreg.families`` in pyproject.toml."""
