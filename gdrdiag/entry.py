"""The ``gdrdiag`` console script: Ctrl-C while the CLI is still importing is a clean exit too.

Importing the CLI (typer, click, the command modules) takes a few tenths of a second; a Ctrl-C
in that window used to print a ``KeyboardInterrupt`` traceback, because the CLI's own handler
(gdrdiag/cli/__init__.py, exit 130) was not installed yet. This module imports nothing heavy
itself, so the window left is the interpreter's own start-up.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it (same code as gdrdiag.cli)
EXIT_USAGE = 2


def main() -> None:
    """Import and run the CLI; an interrupt during the import exits 130 with one line."""
    try:
        from gdrdiag.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("gdrdiag: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except ModuleNotFoundError as exc:
        # Run from the source tree (PYTHONPATH=.) by a Python without the dependencies.
        if exc.name is None or exc.name.split(".")[0] == "gdrdiag":
            raise
        sys.stderr.write(
            f"gdrdiag: this Python ({sys.executable}) lacks the package {exc.name!r} gdrdiag needs; "
            "run bash scripts/setup.sh (then .venv/bin/gdrdiag), or pip install -e . (README)\n"
        )
        sys.exit(EXIT_USAGE)
    cli_main()
