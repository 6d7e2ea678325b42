"""The layer rules of docs/architecture.md, checked by reading every module's imports.

Data flows one way: hw/ adapters -> inspect/, bench/ -> model/ -> diagnose/, compare -> render/ -> cli/.
A rule broken here is a design regression even when every other test passes, so this test reads
the source (``ast``; nothing is imported) and names each crossing.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "gdrdiag"

# Third-party modules that touch hardware; only gdrdiag/hw/ may import them. (ctypes is allowed
# elsewhere: benches use its scalar types to describe kernel arguments, which touches nothing.)
HARDWARE_MODULES = ("cuda", "pyverbs", "pynvml", "cupy", "torch")
# Layers that may open files: hw/ reads the machine, cli/ reads and writes the user's files, and
# node_record is the store of fleet records (atomic per-node files, O_APPEND JSONL, bounded reads).
FILE_LAYERS = ("hw", "cli", "node_record")
PATH_METHODS = ("read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob", "rglob")
PRINTING_CALLS = ("print", "echo", "secho")


@dataclass(frozen=True)
class Module:
    """One module of the package: its dotted name, source tree and every gdrdiag import in it."""

    name: str
    path: Path
    tree: ast.Module

    @property
    def layer(self) -> str:
        """The first component under gdrdiag (``hw``, ``bench``, ``compare``...)."""
        parts = self.name.split(".")
        return parts[1] if len(parts) > 1 else ""

    def imports(self) -> list[str]:
        """Every imported dotted name, module-level or lazy (inside functions) alike."""
        names: list[str] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve_from(self.name, node, self.path.name == "__init__.py")
                names.append(base)
                names.extend(f"{base}.{alias.name}" for alias in node.names)
        return names

    def gdrdiag_imports(self, known: set[str]) -> set[str]:
        """Imported gdrdiag modules (``from pkg import name`` counts pkg.name only when it is a module)."""
        return {name for name in self.imports() if name in known and name != self.name}


def _resolve_from(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = ".".join(parts[:keep])
    return f"{base}.{node.module}" if node.module else base


def _modules() -> list[Module]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append(Module(".".join(parts), path, ast.parse(path.read_text(), filename=str(path))))
    return found


MODULES = _modules()
KNOWN = {m.name for m in MODULES}


def test_the_package_was_found():
    assert len(MODULES) > 40 and "gdrdiag.model.report" in KNOWN


def test_only_hw_imports_hardware_libraries():
    crossings = [
        f"{m.name} imports {name}"
        for m in MODULES
        if m.layer != "hw"
        for name in m.imports()
        if name.split(".")[0] in HARDWARE_MODULES
    ]
    assert crossings == []


def test_only_hw_and_cli_open_files():
    """/sys, /proc and /dev are read through hw.sysfs.SysfsTree (live or bundle); no one else opens files."""
    crossings = []
    for m in MODULES:
        if m.layer in FILE_LAYERS:
            continue
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id == "open":
                    crossings.append(f"{m.name}:{node.lineno} calls open")
                elif isinstance(func, ast.Attribute) and func.attr in PATH_METHODS:
                    crossings.append(f"{m.name}:{node.lineno} calls {func.attr}")
                elif (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id == "os"
                ):
                    if func.attr in ("open", "listdir", "scandir", "readlink", "walk"):
                        crossings.append(f"{m.name}:{node.lineno} calls os.{func.attr}")
    assert crossings == []


def _printing_calls(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in PRINTING_CALLS:
                lines.append(node.lineno)
            if name == "write" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
                if func.value.attr in ("stdout", "stderr"):
                    lines.append(node.lineno)
    return lines


def test_only_cli_prints():
    crossings = [
        f"{m.name}:{line}"
        for m in MODULES
        # entry: the console script's doorway to cli/ (one line on an early Ctrl-C)
        if m.layer not in ("cli", "__main__", "entry")
        for line in _printing_calls(m.tree)
    ]
    assert crossings == []


def test_model_imports_nothing_else_from_gdrdiag():
    crossings = [
        f"{m.name} imports {name}"
        for m in MODULES
        if m.layer == "model"
        for name in m.gdrdiag_imports(KNOWN)
        if not name.startswith("gdrdiag.model")
    ]
    assert crossings == []


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("diagnose", ("bench", "hw", "inspect", "cli", "render")),
        ("compare", ("bench", "hw", "inspect", "cli", "render")),
        ("render", ("bench", "hw", "inspect", "cli", "diagnose")),
        ("hw", ("bench", "inspect", "diagnose", "compare", "render", "cli")),
        ("inspect", ("bench", "diagnose", "compare", "render", "cli")),
        ("bench", ("diagnose", "compare", "render", "cli", "inspect")),
        ("pathmodel", ("bench", "hw", "inspect", "diagnose", "compare", "render", "cli")),
    ],
)
def test_pure_layers_import_no_layer_above_or_beside(layer, forbidden):
    crossings = [
        f"{m.name} imports {name}"
        for m in MODULES
        if m.layer == layer
        for name in m.gdrdiag_imports(KNOWN)
        if name.split(".")[1:2] and name.split(".")[1] in forbidden
    ]
    assert crossings == []


def test_no_import_cycles():
    graph = {m.name: m.gdrdiag_imports(KNOWN) for m in MODULES}
    # A package's __init__ re-exporting its children is not a cycle of design; drop parent->child edges.
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not d.startswith(name + ".")}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(" -> ".join(stack[stack.index(dep) :] + [dep]))
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


# Size limits (docs/architecture.md): a function body stays under MAX_FUNCTION_LINES, and a module
# over MAX_MODULE_LINES is reported, not failed. Modules are split by concept (a bench's cases, its
# session, its analysis), never to get under a line count: a module that is long because its one
# concept is long stays whole, and the warning is a prompt to look for a second concept inside it.
# A function's length is its body (docstring included): a typer command declares one parameter per
# option in its signature, which is not logic.
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80
# Exceptions to the function limit, each with its reason in docs/architecture.md.
SIZE_EXCEPTIONS: dict[str, str] = {}


def _function_bodies():
    for m in MODULES:
        for node in ast.walk(m.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{m.name}.{node.name}", node.end_lineno - node.body[0].lineno + 1


def test_long_modules_are_reported_not_failed():
    """A module over MAX_MODULE_LINES is named in a warning (pytest's summary shows it); it never fails."""
    long = {m.name: n for m in MODULES if (n := m.path.read_text().count("\n")) > MAX_MODULE_LINES}
    for name, lines in sorted(long.items()):
        warnings.warn(
            f"{name} has {lines} lines (over {MAX_MODULE_LINES}): does it hold a second concept?",
            LongModuleWarning,
            stacklevel=1,
        )


class LongModuleWarning(UserWarning):
    """A module past the line count at which a second concept usually hides in it."""


def test_no_function_body_is_over_the_size_limit():
    too_long = {
        name: n for name, n in _function_bodies() if n > MAX_FUNCTION_LINES and name not in SIZE_EXCEPTIONS
    }
    assert too_long == {}


def test_cli_parses_user_words_through_the_vocabulary_not_hw():
    """The CLI parsed --memory, --numa and --access through hw/; the parsers live in model/words.py,
    so cli imports hw only to open the live machine."""
    words = {"parse_memory_kind", "parse_numa", "NUMA_HELP", "NumaRequest", "AUTO", "parse_access"}
    through_hw = []
    for m in MODULES:
        if m.layer != "cli":
            continue
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gdrdiag.hw"):
                through_hw += [f"{m.name}: {a.name}" for a in node.names if a.name in words]
    assert through_hw == []


# What the CLI may take from hw/: the machine as its input (hw.bundle: the live machine or a saved
# bundle) and bounded reads of the user's files (hw.safefs). A placement check or a capability probe
# (a NUMA node, a GPU, an RDMA provider) is a bench's question: bench/preflight.py and the configs.
CLI_HW_MODULES = ("gdrdiag.hw.bundle", "gdrdiag.hw.safefs")


def _modules_imported(m: Module, node: ast.AST) -> list[str]:
    """The modules an import statement names (``from gdrdiag.hw import cuda`` names gdrdiag.hw.cuda)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = _resolve_from(m.name, node, m.path.name == "__init__.py")
    if base in ("gdrdiag", "gdrdiag.hw"):
        return [f"{base}.{alias.name}" for alias in node.names]
    return [base]


def test_cli_takes_from_hw_only_the_machine_source_and_safe_reads():
    """The CLI opens the machine or a bundle and reads files safely; it asks the hardware nothing else."""
    crossings = [
        f"{m.name}:{node.lineno} imports {name}"
        for m in MODULES
        if m.layer == "cli"
        for node in ast.walk(m.tree)
        for name in _modules_imported(m, node)
        if (name == "gdrdiag.hw" or name.startswith("gdrdiag.hw."))
        and not any(name == ok or name.startswith(ok + ".") for ok in CLI_HW_MODULES)
    ]
    assert crossings == []


def test_render_reads_the_comparison_as_plain_data():
    """Render imported compare.py for its types; they live in model/."""
    from_compare = [
        m.name
        for m in MODULES
        if m.layer == "render"
        for node in ast.walk(m.tree)
        if isinstance(node, ast.ImportFrom) and node.module == "gdrdiag.compare"
    ]
    assert from_compare == []


# Every package and top-level module of gdrdiag, in the order data flows (docs/architecture.md): a module
# may import its own layer and the layers ranked below it, never one ranked at or above it. A new
# package fails test_every_layer_has_a_place until it is placed here (and in the architecture doc).
LAYER_RANK = {
    "": 0,  # gdrdiag/__init__.py: the version
    "errors": 0,
    "filemode": 0,
    "units": 1,
    "model": 2,
    "pathmodel": 3,
    "hw": 3,
    "inspect": 4,
    "bench": 4,
    "importers": 4,
    "diagnose": 5,
    "fleet_sku": 5,
    "fleet_metrics": 5,
    "compare": 6,
    "fleet_drift": 6,
    "node_record": 6,
    "fleet": 7,
    "json_schemas": 8,
    "render": 9,
    "cli": 10,
    "entry": 11,
    "__main__": 12,
}


def test_every_layer_has_a_place():
    assert {m.layer for m in MODULES} <= set(LAYER_RANK)
    architecture = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    for layer in LAYER_RANK:
        if layer not in ("", "__main__"):
            assert f"{layer}/" in architecture or f"{layer}.py" in architecture, layer


def test_every_import_goes_down_the_layers():
    upward = [
        f"{m.name} imports {name}"
        for m in MODULES
        for name in m.gdrdiag_imports(KNOWN)
        if (theirs := name.split(".")[1] if "." in name else "") != m.layer
        and LAYER_RANK[theirs] >= LAYER_RANK[m.layer]
    ]
    assert upward == []


def test_every_command_module_is_registered_by_name():
    """The CLI is the list in gdrdiag/cli/__init__.py: each *_cmd module imported there by name."""
    init = next(m for m in MODULES if m.name == "gdrdiag.cli")
    registered = {n for n in init.imports() if n.startswith("gdrdiag.cli.") and n.endswith("_cmd")}
    commands = {m.name for m in MODULES if m.name.startswith("gdrdiag.cli.") and m.name.endswith("_cmd")}
    assert commands and registered == commands
    for m in MODULES:
        if m.layer == "cli":
            assert "importlib" not in m.imports(), m.name


def test_the_registered_commands_are_the_apps_commands():
    import typer.main

    from gdrdiag.cli import COMMAND_MODULES, app

    group = typer.main.get_command(app)
    names = set(group.commands)  # type: ignore[attr-defined]
    declared = {
        info.name or info.callback.__name__.replace("_", "-")
        for info in app.registered_commands
        if info.callback is not None and info.callback.__module__ in {m.__name__ for m in COMMAND_MODULES}
    }
    assert names and declared == names
