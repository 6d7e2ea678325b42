"""The ``gdrdiag`` command line: one module per command, wired onto one typer app.

Only this package prints or picks exit codes. Command modules import heavy dependencies
(cuda-python, numpy, pyverbs, matplotlib) inside their functions, so ``gdrdiag --help``
stays fast.

Exit codes: 0 success (or nothing worse than WARN), 1 a FAIL finding or a failed
measurement, 2 a usage error, 130 interrupted.
"""

from __future__ import annotations

# Every command module registers its command on ``app`` when imported; the list is the CLI.
from gdrdiag.cli import (  # noqa: E402  (after app exists)
    collect_cmd,
    compare_cmd,
    copy_bench_cmd,
    diagnose_cmd,
    fleet_cmd,
    gather_bench_cmd,
    import_cmd,
    inspect_cmd,
    mr_bench_cmd,
    peer_bench_cmd,
    report_cmd,
    show_cmd,
)
from gdrdiag.cli.application import GdrdiagGroup, app, main

COMMAND_MODULES = (
    copy_bench_cmd,
    inspect_cmd,
    collect_cmd,
    diagnose_cmd,
    compare_cmd,
    show_cmd,
    report_cmd,
    mr_bench_cmd,
    gather_bench_cmd,
    peer_bench_cmd,
    fleet_cmd,
    import_cmd,
)

__all__ = ["COMMAND_MODULES", "GdrdiagGroup", "app", "main"]
