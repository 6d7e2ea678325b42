"""Helpers every command shares: error -> exit-code mapping, JSON switch, output."""

from __future__ import annotations

import functools
import re
import sys
from typing import Any, Callable, Optional, TypeVar

import typer

from gdrdiag.errors import GdrdiagError, HardwareError, NotSupported, UserInputError, caused_by_interrupt
from gdrdiag.model.words import WordError

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

F = TypeVar("F", bound=Callable[..., Any])


def handles_errors(func: F) -> F:
    """Turn gdrdiag's exceptions into one line on stderr and the documented exit code.

    Resources are released by the context managers inside the pipeline before the exception
    reaches here (Ctrl-C included), so this only reports.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            check_output_paths(kwargs)
            return func(*args, **kwargs)
        except UserInputError as exc:
            error_line(f"gdrdiag: error: {exc}")
            raise typer.Exit(EXIT_USAGE) from None
        except WordError as exc:  # a word of an option that names nothing (model/words.py)
            error_line(f"gdrdiag: error: {exc}")
            raise typer.Exit(EXIT_USAGE) from None
        except NotSupported as exc:
            error_line(f"gdrdiag: not supported here: {exc.reason}")
            raise typer.Exit(EXIT_FAIL) from None
        except HardwareError as exc:
            error_line(f"gdrdiag: hardware error: {exc}")
            raise typer.Exit(EXIT_FAIL) from None
        except GdrdiagError as exc:
            error_line(f"gdrdiag: error: {exc}")
            raise typer.Exit(EXIT_FAIL) from None
        except KeyboardInterrupt:
            say_interrupted("gdrdiag: interrupted; resources released")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except OSError as exc:
            # Last resort: a path the user gave that the OS refuses (name too long, a loop of
            # links, a file where a folder should be) is a usage error, never a traceback.
            if exc.filename is None:
                raise
            name = str(exc.filename)
            name = name if len(name) <= 120 else "..." + name[-117:]
            error_line(f"gdrdiag: error: {name}: {exc.strerror or exc}")
            raise typer.Exit(EXIT_USAGE) from None
        except Exception as exc:
            if not caused_by_interrupt(exc):  # a Ctrl-C wrapped by Python (errors.caused_by_interrupt)
                raise
            say_interrupted("gdrdiag: interrupted; resources released")
            raise typer.Exit(EXIT_INTERRUPTED) from None

    return wrapper  # type: ignore[return-value]


# Whether this run has said on stderr that it was interrupted. typer turns a Ctrl-C that lands
# outside a command's body (parsing the options, say) into exit 130 without a word; the root
# group (cli/__init__.py) adds the line then, and only then.
_interrupt_said = False


def say_interrupted(text: str) -> None:
    """The one ``gdrdiag: interrupted...`` line of a run (see :func:`interrupt_said`)."""
    global _interrupt_said
    error_line(text)
    _interrupt_said = True


def interrupt_said() -> bool:
    """True once :func:`say_interrupted` wrote its line in this run."""
    return _interrupt_said


def forget_interrupt() -> None:
    """A new run starts (the root group's ``main``; tests invoke many runs in one process)."""
    global _interrupt_said
    _interrupt_said = False


# Parameters that name a file a command writes -> the option as the user typed it.
OUTPUT_FLAGS = {
    "output": "--output",
    "json_out": "--json-out",
    "html": "--html",
    "prometheus": "--prometheus",
    "record": "--record",
    "jsonl": "--jsonl",
}


def force_requested(ctx: Any = None, kwargs: Any = None) -> bool:
    """True when the command's own ``--force`` or the shared one (added by the root group) was given."""
    if kwargs and kwargs.get("force"):
        return True
    if ctx is None:
        try:
            from typer._click.globals import get_current_context
        except ImportError:  # pragma: no cover - older typer uses the click package
            from click import get_current_context

        ctx = get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get("gdrdiag.force"))


def check_output_paths(kwargs: dict) -> None:
    """Check every output-file option of a command before it runs (see report_files.check_output_path).

    A path holding ``{host}`` is checked by the command once the name is known.
    """
    from pathlib import Path

    paths = {name: kwargs.get(name) for name in OUTPUT_FLAGS if kwargs.get(name) is not None}
    if not paths:
        return
    from gdrdiag.cli.report_files import check_output_path

    force = force_requested(kwargs=kwargs)
    for name, value in paths.items():
        if "{host}" not in str(value):
            # A .prom textfile is rewritten on every run by design; a .jsonl file is appended to.
            check_output_path(
                Path(value), OUTPUT_FLAGS[name], force=force, append=name in ("jsonl", "prometheus")
            )
    check_output_clashes(kwargs, {n: Path(v) for n, v in paths.items() if "{host}" not in str(v)})


def check_output_clashes(kwargs: dict, outputs: dict) -> None:
    """Refuse two outputs naming one file, and an output naming one of the command's inputs.

    Both are refused before any work and whatever ``--force`` says: the second output would
    be refused only after the run (the first has made the file by then), and an input replaced
    by an output is lost. An input is any other path-valued option or argument (or a list of
    them); files are compared as the system resolves them (links, ``..``, hard links).
    """
    import os
    from pathlib import PurePath

    def same(a: Any, b: Any) -> bool:
        try:
            if os.path.exists(a) and os.path.exists(b):
                return os.path.samefile(a, b)
            return os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return False

    names = list(outputs)
    for i, name in enumerate(names):
        for other in names[:i]:
            if same(outputs[name], outputs[other]):
                raise UserInputError(
                    f"{OUTPUT_FLAGS[other]} and {OUTPUT_FLAGS[name]} name the same file ({outputs[name]})"
                )
    inputs = []
    for key, value in kwargs.items():
        if key in OUTPUT_FLAGS:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        inputs.extend(v for v in values if isinstance(v, PurePath))
    for name, path in outputs.items():
        for source in inputs:
            if os.path.isfile(source) and same(path, source):
                raise UserInputError(
                    f"{OUTPUT_FLAGS[name]} {path} is one of its inputs; gdrdiag never writes over an input, "
                    "even with --force"
                )


# The most characters of one word (a path, an option's value) an error line echoes back.
ECHO_WORD_MAX = 100
ERROR_LINE_MAX = 400


def bounded_words(text: str, longest: int = ECHO_WORD_MAX) -> str:
    """``text`` with every word longer than ``longest`` cut in its middle (``head...tail``).

    Error messages echo what the user typed (a path, an option's value); a 500-character value
    made a 570-column line. The start and the end of a long word are kept: a path's folder and its
    file name, a value's quotes.
    """
    keep = longest - 3
    head, tail = keep - keep // 2, keep // 2

    def cut(match: Any) -> str:
        word = match.group(0)
        return f"{word[:head]}...{word[-tail:]}"

    return re.sub(rf"\S{{{longest + 1},}}", cut, text)


def error_line(text: str) -> None:
    """One bounded line on stderr, made safe for the terminal (messages quote untrusted input)."""
    from gdrdiag.render.sanitize import one_line

    typer.echo(one_line(bounded_words(one_line(text, limit=1 << 16)), limit=ERROR_LINE_MAX), err=True)


def warn(text: str) -> None:
    """One ``gdrdiag: warning:`` line on stderr (the run goes on)."""
    error_line(f"gdrdiag: warning: {text}")


def wants_json(ctx: typer.Context) -> bool:
    """True when the global ``--json`` was given (``gdrdiag --json CMD``)."""
    root = ctx.find_root()
    return bool(root.obj and root.obj.get("json"))


def echo(text: str = "") -> None:
    """Print to stdout (the one place commands write their main output).

    Text passes through :func:`gdrdiag.render.sanitize.terminal_safe`: bundles and Reports are
    untrusted, and their strings must not drive the terminal (escape sequences, controls).
    """
    from gdrdiag.render.sanitize import terminal_safe

    typer.echo(terminal_safe(text))


def output_width(ctx: typer.Context) -> Optional[int]:
    """The width text output must fit: None with ``--wide``, else $COLUMNS, else the terminal, else 100.

    A COLUMNS below ``render.layout.NARROWEST`` is taken as that: no table fits less.
    """
    import os

    from gdrdiag.render.layout import DEFAULT_WIDTH, NARROWEST

    root = ctx.find_root()
    if root.obj and root.obj.get("wide"):
        return None
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(NARROWEST, int(columns))
    if sys.stdout.isatty():
        try:
            return max(NARROWEST, os.get_terminal_size(sys.stdout.fileno()).columns)
        except OSError:
            pass
    return DEFAULT_WIDTH


def echo_text(ctx: typer.Context, text: str) -> None:
    """Print text output (never JSON) fitted to :func:`output_width`: long lines wrap at words."""
    from gdrdiag.render.layout import wrap_lines

    echo(wrap_lines(text, output_width(ctx)))


def split_list(text: str, what: str) -> tuple[str, ...]:
    """Split a comma-separated option value into lower-case items; UserInputError when empty."""
    items = tuple(p.strip().lower() for p in text.split(",") if p.strip())
    if not items:
        raise UserInputError(f"{what}: empty list")
    return items
