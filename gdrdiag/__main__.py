"""``python -m gdrdiag`` runs the command-line interface."""

from gdrdiag.cli import main

main()
