"""Every CUDA driver and NVRTC call names the binding itself, and each one exists and fits its arguments.

Driver code runs only on a GPU machine, so a misspelt function or a wrong argument count would
surface there first. Two checks that need no GPU:

- a grep of the source: no driver or NVRTC function is called by a name in a string
  (``cuda.call("cuX", ...)``, ``getattr(drv, "cuX")``), which grep-by-symbol and a type checker
  cannot follow;
- a walk of the syntax tree: every ``<driver>.cuX`` / ``<nvrtc>.nvrtcX`` attribute the code reads
  is a function of the installed ``cuda.bindings``, and where the site calls it (directly or
  through ``cuda.call``) with a fixed number of arguments, the binding's signature accepts them.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "gdrdiag", ROOT / "scripts" / "probes", ROOT / "tests" / "hw"]

# A quoted driver (cuX) or NVRTC (nvrtcX) function name as the first argument of call(...), or as
# the name getattr looks up: the string-named calls this repository retired.
STRING_NAMED = re.compile(
    r"""\bcall\(\s*f?["'](?:cu|nvrtc)[A-Z]"""
    r"""|\bgetattr\([^,()]*(?:\(\))?\s*,\s*f?["'](?:cu|nvrtc)[A-Z]"""
)

# How the code refers to the two binding modules: the names it binds them to, and the lazy
# importers (hw/cuda.py driver(), hw/nvrtc.py _nvrtc()).
DRIVER_NAMES, DRIVER_IMPORTERS = {"drv"}, {"driver"}
NVRTC_NAMES, NVRTC_IMPORTERS = {"nv"}, {"_nvrtc"}


def _sources() -> list[Path]:
    files = [p for d in SCANNED for p in sorted(d.rglob("*.py"))]
    assert len(files) > 50, SCANNED  # the scan sees the package, not an empty folder
    return files


@pytest.mark.parametrize(
    "text",
    [
        'cuda.call("cuMemAlloc", n)',
        "call('cuDeviceGetCount')",
        'cuda.call(\n    "cuMemAdvise",\n    ptr,\n)',
        'getattr(drv, "cuMemcpyBatchAsync", None)',
        "getattr(cuda.driver(), 'cuInit')(0)",
        'getattr(nv, f"nvrtcGet{kind}")',
    ],
)
def test_the_guard_sees_a_string_named_call(text):
    assert STRING_NAMED.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "cuda.call(cuda.driver().cuMemAlloc, n)",
        "call(driver().cuDeviceGetCount)",
        'getattr(drv.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}", None)',
        'cuda.check((err,), "cuMemcpyAsync")',  # the name of a call already made, for the error
    ],
)
def test_the_guard_lets_a_typed_call_through(text):
    assert not STRING_NAMED.search(text)


def test_no_driver_function_is_called_by_its_name():
    hits = []
    for path in _sources():
        text = path.read_text()
        for m in STRING_NAMED.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            hits.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)!r}")
    assert not hits, "call the binding itself, e.g. cuda.call(cuda.driver().cuX, ...):\n" + "\n".join(hits)


def _module_of(node: ast.expr) -> str | None:
    """'driver' or 'nvrtc' when ``node`` is how the code refers to that binding module."""
    if isinstance(node, ast.Name):
        return "driver" if node.id in DRIVER_NAMES else "nvrtc" if node.id in NVRTC_NAMES else None
    if isinstance(node, ast.Call) and not node.args:
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        return "driver" if name in DRIVER_IMPORTERS else "nvrtc" if name in NVRTC_IMPORTERS else None
    return None


def _is_cuda_call(node: ast.Call) -> bool:
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "call") or (
        isinstance(f, ast.Attribute)
        and f.attr == "call"
        and isinstance(f.value, ast.Name)
        and f.value.id == "cuda"
    )


def _uses(tree: ast.AST):
    """(binding module, function name, positional argument count or None, line) per use in ``tree``."""
    called: dict[int, int | None] = {}  # id of the attribute node -> arguments it is called with
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _is_cuda_call(node):
            if not node.args or not isinstance(node.args[0], ast.Attribute):
                continue
            target, args = node.args[0], node.args[1:]
        elif isinstance(node.func, ast.Attribute):
            target, args = node.func, node.args
        else:
            continue
        fixed = not node.keywords and not any(isinstance(a, ast.Starred) for a in args)
        called[id(target)] = len(args) if fixed else None
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and re.match(r"(cu|nvrtc)[A-Z]", node.attr):
            module = _module_of(node.value)
            if module is not None:
                yield module, node.attr, called.get(id(node), None), node.lineno


def test_every_driver_call_names_a_binding_that_takes_those_arguments():
    bindings = {
        "driver": pytest.importorskip("cuda.bindings.driver"),
        "nvrtc": pytest.importorskip("cuda.bindings.nvrtc"),
    }
    problems, seen = [], 0
    for path in _sources():
        for module, name, nargs, line in _uses(ast.parse(path.read_text(), str(path))):
            seen += 1
            where = f"{path.relative_to(ROOT)}:{line}: {module}.{name}"
            fn = getattr(bindings[module], name, None)
            if not callable(fn):
                problems.append(f"{where} is not a function of cuda.bindings.{module}")
                continue
            if nargs is None:
                continue
            try:
                inspect.signature(fn).bind(*range(nargs))
            except TypeError as exc:
                problems.append(f"{where} called with {nargs} arguments: {exc}")
            except ValueError:  # a binding without a readable signature: existence is all we can check
                pass
    assert seen > 60  # the walk finds the package's driver calls, not nothing
    assert not problems, "\n".join(problems)
