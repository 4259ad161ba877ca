"""How submitter-written text is shown on a terminal: every control or format character escaped.

Kept apart from :mod:`tgbhub.results.leaderboards` (and importing nothing heavy) so that the command line's table
printer can use it without loading the grader.
"""

from __future__ import annotations

import re
from typing import Any

#: terminal control: C0 and C1 controls, DEL, and the format characters that reorder or hide text (bidi overrides,
#: zero-width joiners); an ESC starts every terminal escape sequence, so escaping it defuses the sequence
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def terminal_safe(value: Any) -> str:
    """``value`` as text that prints as itself: every control or format character (an ESC that would start a
    terminal escape sequence, a carriage return, a bidi override) shown as its ``\\xNN``/``\\uNNNN`` escape, as the
    site escapes the same fields for HTML."""
    text = "" if value is None else str(value)
    return _CONTROL.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                   else f"\\u{ord(m.group()):04x}"), text)
