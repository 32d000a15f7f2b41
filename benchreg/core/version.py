"""The release of benchreg (read by the core for provenance and cache keys; `benchreg.__version__`
re-exports it)."""

__version__ = "0.1.0"
