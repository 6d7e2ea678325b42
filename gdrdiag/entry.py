"""The ``gdrdiag`` console script: a Ctrl-C is one line and exit 130 in whichever phase it lands.

Importing the CLI (typer, click, the command modules) and building typer's command take a few
tenths of a second; a Ctrl-C in that window used to print a ``KeyboardInterrupt`` traceback,
because the CLI's own handler (gdrdiag/cli/__init__.py, exit 130) was not installed yet. This
module imports nothing heavy itself, so the window left is the interpreter's own start-up.

Two CPython behaviours made an interrupted run end silently, killed by SIGINT (inspect
exited 130 without a word 5 times in 8):

- A Ctrl-C that interrupts ``exec`` of a source string (``dataclasses`` builds ``__init__`` that
  way while a module is imported) marks the interpreter, and once the run is over it kills itself
  with SIGINT however the exception was handled (``run_eval_code_obj`` and ``exit_sigint`` in
  CPython's Python/pythonrun.c and Modules/main.c). An interrupted run therefore blocks SIGINT
  before it exits: that kill stays pending, exit_sigint falls through to exit code 130, and the
  shutdown (atexit handlers, library destructors) runs in full.
- The interpreter's shutdown restores the default SIGINT action (``_PySignal_Fini``), so a Ctrl-C
  in the last tenths of a second, after the command had written everything, killed the process.
  Once the command has finished, SIGINT is ignored: the run's work and exit code stand.
  ``signal.signal`` itself first runs any handler already pending, so a Ctrl-C in that very
  instant raises there; ``main`` then ignores it again rather than print a traceback.
"""

from __future__ import annotations

import signal
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it (same code as gdrdiag.cli)
EXIT_USAGE = 2


def main() -> None:
    """Import and run the CLI; an interrupt at any point exits 130 with one line."""
    code = _run()
    while True:
        try:
            _leave(code)
        except KeyboardInterrupt:
            # A Ctrl-C after the command had finished, while SIGINT was being set to be ignored
            # (``signal.signal`` runs pending handlers before it swaps, CPython's
            # Modules/signalmodule.c): the run's output and exit code stand, so leave again.
            continue


def _run() -> object:
    """The command's exit code, or 130 once an interrupt is said (before or during the command)."""
    try:
        _forget_interrupt()
        try:
            from gdrdiag.cli import main as cli_main
        except ModuleNotFoundError as exc:
            # Run from the source tree (PYTHONPATH=.) by a Python without the dependencies.
            if exc.name is None or exc.name.split(".")[0] == "gdrdiag":
                raise
            sys.stderr.write(
                f"gdrdiag: this Python ({sys.executable}) lacks the package {exc.name!r} gdrdiag "
                "needs; run bash scripts/setup.sh (then .venv/bin/gdrdiag), or pip install -e . "
                "(README)\n"
            )
            return EXIT_USAGE
        cli_main()
        return 0
    except SystemExit as exc:
        return exc.code
    except BaseException as exc:
        if not _interrupt(exc):
            raise
        return _interrupted()


def _interrupt(exc: BaseException) -> bool:
    """A Ctrl-C, or an error Python raised because of one (errors.caused_by_interrupt)."""
    from gdrdiag.errors import caused_by_interrupt

    return caused_by_interrupt(exc)


def _forget_interrupt() -> None:
    """A run starts: no interruption said yet (the CLI is already imported where tests call main)."""
    common = sys.modules.get("gdrdiag.cli.common")
    if common is not None:
        common.forget_interrupt()


def _interrupted() -> int:
    """Say so, unless the CLI already did (common.say_interrupted)."""
    common = sys.modules.get("gdrdiag.cli.common")
    if common is None or not common.interrupt_said():
        sys.stderr.write("gdrdiag: interrupted\n")
    return EXIT_INTERRUPTED


def _leave(code: object) -> None:
    """Exit with ``code``, through the interpreter's normal shutdown (see the module doc)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == EXIT_INTERRUPTED and hasattr(signal, "pthread_sigmask"):
        # After an interrupted exec CPython still sends itself SIGINT once finalised (exit_sigint in
        # Modules/main.c). With SIGINT blocked that kill stays pending and exit_sigint returns
        # 128 + SIGINT: the process exits 130 after a full shutdown (atexit handlers, library
        # destructors) instead of dying by the signal or skipping that shutdown with os._exit.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    sys.exit(code)
