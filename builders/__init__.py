"""Data-set builders: the generators of the embedded samples (not part of the wheel).

Run from the project root, e.g. ``python -m builders.molp2s.make_sample --check``; they import
the installed (or editable) ``benchreg`` package.
"""
