"""Make untrusted text safe to print on a terminal.

Bundles, Reports and peers are untrusted: a host name, a file name or a note can carry ANSI/VT
escape sequences (CSI ``ESC [``, OSC ``ESC ]`` ... which clear the screen, set the window title,
write the clipboard or forge output), C1 control characters that some terminals treat as
escapes, or lone surrogates that cannot be encoded at all. :func:`terminal_safe` is the one
function every renderer and the CLI's output go through (``cli.common.echo`` and the error
printers), so nothing from such a source reaches the terminal raw.
"""

from __future__ import annotations

import re

# ESC-introduced sequences: CSI (ESC [ ... final byte), OSC/DCS/SOS/PM/APC (ESC ] ... BEL or ESC \),
# and two-byte escapes. Then any C0 control except tab and newline, DEL, the C1 range, and the
# bidirectional overrides that reorder what is shown (Trojan Source).
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\|$)"
    r"|\x1b[ -~]?"
    r"|[\x9b][0-?]*[ -/]*[@-~]?"
    r"|[\x9d\x90\x98\x9e\x9f].*?(?:\x07|\x9c|$)",
    re.DOTALL,
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences and control characters (tab and newline kept).

    Lone surrogates become U+FFFD, so the result can always be encoded as UTF-8.
    """
    if not isinstance(text, str):
        text = str(text)
    text = _ESCAPES.sub("", text)
    text = _CONTROLS.sub("", text.replace("\r\n", "\n"))
    return _SURROGATES.sub("\ufffd", text)


def shown(value: object, unknown: str = "?") -> str:
    """``value`` as a table cell or in a title; None (a parameter the Report does not hold) as ``?``.

    A Report's optional fields are None where unknown; ``str()`` or an f-string printed the word
    ``None`` into tables and titles.
    """
    return unknown if value is None else str(value)


def one_line(text: str, limit: int = 400) -> str:
    """:func:`terminal_safe` text on one line (newlines and tabs become spaces), at most ``limit`` chars."""
    flat = " ".join(terminal_safe(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
