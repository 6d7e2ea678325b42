"""``python -m gdrdiag`` runs the command-line interface (through the same entry as the script)."""

from gdrdiag.entry import main

main()
