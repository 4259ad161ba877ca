"""Benchmarks, GPU checks and doc-figure tools, run from the repository root as ``python -m scripts.<module>``."""
