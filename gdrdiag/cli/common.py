"""Helpers every command shares: error -> exit-code mapping, JSON switch, output."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, TypeVar

import typer

from gdrdiag.errors import GdrdiagError, HardwareError, NotSupported, UserInputError

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
            return func(*args, **kwargs)
        except UserInputError as exc:
            typer.echo(f"gdrdiag: error: {exc}", err=True)
            raise typer.Exit(EXIT_USAGE) from None
        except NotSupported as exc:
            typer.echo(f"gdrdiag: not supported here: {exc.reason}", err=True)
            raise typer.Exit(EXIT_FAIL) from None
        except HardwareError as exc:
            typer.echo(f"gdrdiag: hardware error: {exc}", err=True)
            raise typer.Exit(EXIT_FAIL) from None
        except GdrdiagError as exc:
            typer.echo(f"gdrdiag: error: {exc}", err=True)
            raise typer.Exit(EXIT_FAIL) from None
        except KeyboardInterrupt:
            typer.echo("gdrdiag: interrupted; resources released", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None

    return wrapper  # type: ignore[return-value]


def wants_json(ctx: typer.Context) -> bool:
    """True when the global ``--json`` was given (``gdrdiag --json CMD``)."""
    root = ctx.find_root()
    return bool(root.obj and root.obj.get("json"))


def echo(text: str = "") -> None:
    """Print to stdout (the one place commands write their main output)."""
    typer.echo(text)


def split_list(text: str, what: str) -> tuple[str, ...]:
    """Split a comma-separated option value into lower-case items; UserInputError when empty."""
    items = tuple(p.strip().lower() for p in text.split(",") if p.strip())
    if not items:
        raise UserInputError(f"{what}: empty list")
    return items


def progress_enabled() -> bool:
    """Show progress bars only on an interactive terminal."""
    return sys.stderr.isatty()
