"""The permissions of a file gdrdiag writes for the user: what the umask allows, as for any file.

Outputs are written to a temporary file (``mkstemp`` makes it 0600) and renamed into place; the
temporary file then gets the mode ``open(2)`` would have given a new file, 0666 less the umask.
A fixed 0644 made a Report (host names, the kernel command line) world-readable under umask 077.
"""

from __future__ import annotations

import os

NEW_FILE = 0o666


def new_file_mode() -> int:
    """0666 less the process umask (read by setting it; 077 meanwhile, so nothing is made looser)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return NEW_FILE & ~mask
