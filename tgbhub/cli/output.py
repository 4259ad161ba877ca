"""How the command line prints: sizes, tables, aligned cards and graded results."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tgbhub.errors import human_bytes as human_bytes  # the command line takes every printing helper from here
from tgbhub.results.display import terminal_safe


def print_json(value: Any, **options: Any) -> int:
    """Print ``value`` as indented JSON; returns exit code 0 so a command can end with ``return print_json(...)``."""
    print(json.dumps(value, indent=1, **options))
    return 0


def print_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """Left-aligned columns under a header line, every cell escaped for the terminal
    (:func:`~tgbhub.results.display.terminal_safe`)."""
    cells = [{c: terminal_safe(r[c]) for c in columns} for r in rows]
    widths = {c: max(len(c), *(len(r[c]) for r in cells)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for row in cells:
        print("  ".join(row[c].ljust(widths[c]) for c in columns).rstrip())


def print_card(card: Mapping[str, Any], as_json: bool, width: int = 14) -> int:
    """A flat card as JSON, or one ``key: value`` line per entry with the keys right-aligned."""
    if as_json:
        return print_json(dict(card))
    print("\n".join(f"{key:>{width}}: {value}" for key, value in card.items()))
    return 0


def print_block(label: str, lines: Sequence[str], width: int = 14) -> None:
    """``label: first line`` with the other lines aligned under it."""
    for index, line in enumerate(lines):
        print(f"{label if index == 0 else '':>{width}}{':' if index == 0 else ' '} {line}")


def print_cards(cards: Sequence[Mapping[str, Any]], as_json: bool,
                lines: Callable[[Mapping[str, Any]], list[str]]) -> int:
    """Plug-in cards as JSON, or ``lines(card)`` for each."""
    if as_json:
        return print_json(list(cards))
    print("\n".join(line for card in cards for line in lines(card)))
    return 0


def print_result(result: Mapping[str, Any], as_json: bool) -> None:
    """A graded result: what was graded (the dataset's logical digest among it), each metric, what was skipped and
    the validity screen."""
    if as_json:
        print_json(dict(result))
        return
    for key in ("dataset", "version", "task", "split", "model"):
        if key in result:
            print(f"{key:>10}: {result[key]}")
    if "digest" in result:
        print(f"{'digest':>10}: {result['digest']}")
        if result.get("digest_kind"):
            print(f"{'':>10}  ({result['digest_kind']})")
    for key, value in result["metrics"].items():
        print(f"{key:>10}: {value:.6f}")
    skipped = result.get("skipped_snapshots")
    if skipped:
        print(f"{'skipped':>10}: snapshots {skipped['first']}..{skipped['last']} ({skipped['count']}): "
              f"{skipped['reason']}")
    screen = result.get("validity_screen")
    if screen:
        verdict = (f"{screen['metric']} {screen['value']:.6f} vs threshold {screen['threshold']}: "
                   f"{'valid' if screen['valid'] else 'NOT valid'}" if screen.get("applied")
                   else f"not applied: {screen.get('reason')}")
        print(f"{'validity':>10}: {verdict}")
