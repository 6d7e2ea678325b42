"""The one typer app every command registers on: shared options, one-line errors, exit codes.

Kept apart from the package's ``__init__`` so each command module can import ``app`` from here
while ``gdrdiag/cli/__init__.py`` imports every command module by name (the registration a reader and
the layer test can see). Exit codes: 0 success (or nothing worse than WARN), 1 a FAIL finding or a
failed measurement, 2 a usage error, 130 interrupted.
"""

from __future__ import annotations

import difflib
import sys
from typing import Any, Optional

import typer
import typer.main
from typer.core import TyperGroup

from gdrdiag import __version__

try:  # typer >= 0.20 vendors click as typer._click; older typer uses the click package
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, NoSuchOption, UsageError
    from typer.exceptions import Abort
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import Abort, ClickException, NoSuchOption, UsageError

    class NoArgsIsHelpError(UsageError):  # type: ignore[no-redef]
        """Absent from click < 8.2 (which prints the help itself)."""


def _words_not_types(cls: Any) -> None:
    """Help shows ``<str>...`` where typer shows a Python type such as ``<list[Path]>``."""
    import re

    original = getattr(cls, "display_type_rich", None)
    if original is None or getattr(original, "_gdrdiag", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> Any:
        text = original(self, ctx)
        if isinstance(text, str):
            text = re.sub(r"<(?:list|tuple)\[(\w+)\]>", r"<\1>", text)
        return text

    display_type_rich._gdrdiag = True  # type: ignore[attr-defined]
    cls.display_type_rich = display_type_rich


for _cls in ("TyperArgument", "TyperOption"):
    if hasattr(typer.core, _cls):
        _words_not_types(getattr(typer.core, _cls))


def _help_keeps_hyphenated_words() -> None:
    """Help text wraps at spaces only: a value such as ``working-set`` is never split at its hyphen."""
    try:
        from typer._click import _textwrap
    except ImportError:  # pragma: no cover - older typer with the click package
        return
    wrapper = _textwrap.TextWrapper
    if getattr(wrapper.__init__, "_gdrdiag", False):
        return
    original = wrapper.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["break_on_hyphens"] = False
        original(self, *args, **kwargs)

    __init__._gdrdiag = True  # type: ignore[attr-defined]
    wrapper.__init__ = __init__  # type: ignore[method-assign]


_help_keeps_hyphenated_words()


# Options whose value is a file gdrdiag writes; a command with one of them and no --force of its
# own gets the global --force (see GdrdiagGroup.get_command and common.check_output_paths).
OUTPUT_PARAMS = ("output", "json_out", "html", "prometheus", "record", "jsonl")


def _json_flag(ctx: typer.Context, value: bool) -> None:
    """``CMD --json``: the same switch as ``gdrdiag --json CMD``."""
    if value:
        root = ctx.find_root()
        root.obj = dict(root.obj or {}, json=True)


def _wide_flag(ctx: typer.Context, value: bool) -> None:
    """``CMD --wide``: text output unwrapped and untruncated (see common.output_width)."""
    if value:
        root = ctx.find_root()
        root.obj = dict(root.obj or {}, wide=True)


def _force_flag(ctx: typer.Context, value: bool) -> None:
    if value:
        ctx.meta["gdrdiag.force"] = True


def _shared_options() -> dict[str, Any]:
    """``--json`` and ``--force`` as typer builds them (from a prototype command), to add to others."""
    proto = typer.Typer(add_completion=False)

    @proto.command()
    def _options(
        json_flag: bool = typer.Option(
            False, "--json", callback=_json_flag, expose_value=False,
            help="Machine-readable JSON on stdout (same as gdrdiag --json CMD).",
        ),
        wide_flag: bool = typer.Option(
            False, "--wide", callback=_wide_flag, expose_value=False,
            help="Text output unwrapped and untruncated (the default fits $COLUMNS, else 100).",
        ),
        force_flag: bool = typer.Option(
            False, "--force", "-f", callback=_force_flag, expose_value=False,
            help="Overwrite existing output files.",
        ),
    ) -> None:  # fmt: skip
        """Prototype only: never run."""

    return {p.opts[0]: p for p in typer.main.get_command(proto).params}


class GdrdiagGroup(TyperGroup):
    """The root command: every error is one line on stderr, exit 2, with the nearest valid name.

    Click (through typer's rich formatting) prints a usage line, a hint and a boxed message, five
    or six lines for a typo. Here a usage error becomes ``gdrdiag CMD: error: MESSAGE (see
    gdrdiag CMD --help)``; click already names the nearest option ("Did you mean --json?") and
    :meth:`resolve_command` adds the nearest command. Every sub-command also accepts ``--json``
    (not only before the command), ``--wide`` (text unwrapped) and, when it writes a file and has
    no ``--force`` of its own, a ``--force`` that allows overwriting it.
    """

    _shared: Optional[dict[str, Any]] = None

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None or getattr(cmd, "_gdrdiag_shared_options", False):
            return cmd
        if GdrdiagGroup._shared is None:
            GdrdiagGroup._shared = _shared_options()
        names = {p.name for p in cmd.params}
        opts = {o for p in cmd.params for o in getattr(p, "opts", ())}
        if "--json" not in opts:
            cmd.params.append(self._shared["--json"])
        if "--wide" not in opts:
            cmd.params.append(self._shared["--wide"])
        if names & set(OUTPUT_PARAMS) and "--force" not in opts:
            cmd.params.append(self._shared["--force"])
        cmd._gdrdiag_shared_options = True
        return cmd

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            name = args[0] if args else ""
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            if close and "Did you mean" not in exc.message:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean '{close[0]}'?"
            raise

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:  # fmt: skip
        from gdrdiag.cli.common import EXIT_INTERRUPTED, forget_interrupt, interrupt_said, say_interrupted
        from gdrdiag.errors import caused_by_interrupt

        forget_interrupt()
        try:
            rv = super().main(args=args, prog_name=prog_name or "gdrdiag", complete_var=complete_var,
                              standalone_mode=False, **extra)  # fmt: skip
        except NoArgsIsHelpError as exc:  # bare ``gdrdiag``: the help, as before
            exc.show()
            if not standalone_mode:
                raise
            sys.exit(2)
        except ClickException as exc:
            _one_line_error(exc)
            if not standalone_mode:
                raise
            sys.exit(2 if isinstance(exc, UsageError) else exc.exit_code)
        except Abort:
            say_interrupted("gdrdiag: interrupted")
            if not standalone_mode:
                raise
            sys.exit(EXIT_INTERRUPTED)
        except Exception as exc:  # a Ctrl-C that Python wrapped (errors.caused_by_interrupt)
            if not caused_by_interrupt(exc):
                raise
            say_interrupted("gdrdiag: interrupted")
            rv = EXIT_INTERRUPTED
        except KeyboardInterrupt:  # before typer's own handler is in place
            say_interrupted("gdrdiag: interrupted")
            rv = EXIT_INTERRUPTED
        if rv == EXIT_INTERRUPTED and not interrupt_said():
            # typer turns a Ctrl-C outside a command's body (while the options are parsed) into
            # exit 130 without a word (typer/core.py _main: ``except KeyboardInterrupt: raise Exit(130)``).
            say_interrupted("gdrdiag: interrupted")
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


def _one_line_error(exc: Any) -> None:
    """Write a click error as one line: where, what, and the help to read (echoed values bounded)."""
    from gdrdiag.cli.common import bounded_words
    from gdrdiag.render.sanitize import one_line

    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "gdrdiag"
    message = exc.format_message()
    if isinstance(exc, NoSuchOption):
        message = exc.message.rstrip(".") + (
            f". Did you mean {exc.possibilities[0]}?" if exc.possibilities else ""
        )
    hint = f" (see {where} --help)" if isinstance(exc, UsageError) else ""
    sys.stderr.write(one_line(bounded_words(f"{one_line(where)}: error: {one_line(message)}{hint}")) + "\n")


app = typer.Typer(
    name="gdrdiag",
    cls=GdrdiagGroup,
    help="Find out why GPU<->NIC and host<->GPU data paths are slow, and say what to change.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"gdrdiag {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    json_output: bool = typer.Option(
        False,
        "--json",
        help="Machine-readable JSON on stdout (also accepted after the command).",
    ),
    wide_output: bool = typer.Option(
        False, "--wide", help="Text output unwrapped and untruncated (also accepted after the command)."
    ),
    version: Optional[bool] = typer.Option(
        None, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    ctx.obj = {"json": json_output, "wide": wide_output}


# One module per command; each adds its command(s) to ``app`` when imported. Imports at module
# level in these modules are light by contract (typer, gdrdiag.errors/units/model only).


def main() -> None:
    """Console-script entry point."""
    app()
