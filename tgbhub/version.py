"""The library's version, in one place every layer may read (the package face re-exports it)."""

__version__ = "0.1.0"
