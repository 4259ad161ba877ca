"""The ``tgbhub`` command line: a thin layer over the API, one module per command group (:mod:`.datasets`,
:mod:`.grading`, :mod:`.training`, :mod:`.hub`, :mod:`.results`, :mod:`.site`), one grammar (:mod:`.grammar`) and
one way to print (:mod:`.output`). Each command parses, calls one library function and prints."""

from tgbhub.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
