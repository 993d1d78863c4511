"""Every module imports only the layers DESIGN.md and docs/architecture.md allow it.

Data flows one way: file -> events -> recovery facts -> frames -> figures -> widgets, and
each layer imports only the ones before it. ``recovery/`` is the standard library alone
(runtimes vendor it); ``ledger/`` reads files before there is any engine, so of
``recovery/`` it imports only the shared modules, which hold names and the runtime's JSON
facts and import nothing of the engine. Every import counts, a function's own included;
only imports under ``if TYPE_CHECKING:`` are left out (annotations: ``display`` names the
``Ledger`` whose reprs it draws, ``plot`` the ``Ledger`` it is handed).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ledgerviz"

SHARED = ("recovery.vocab", "recovery.payload", "recovery.nesting")
"""The stdlib modules of ``recovery/`` that ``ledger/`` may import: the engine's vocabulary
(``vocab``), where each fact lives in an event's payload (``payload``) and nested content
walked without recursion (``nesting``)."""

ORDER = (
    ("recovery",),
    ("wording",),
    ("ledger",),
    ("html", "file_mode", "examples"),
    ("progress",),
    ("streams",),
    ("frames",),
    ("display",),
    ("api",),
    ("compare",),
    ("export",),
    ("plot",),
    ("report",),
    ("widgets",),
    ("simulate",),
    ("cli",),
    ("__main__", "__init__"),
)
"""The layers from the bottom up (a top-level module or package of ``ledgerviz``, named
without the ``ledgerviz.`` prefix; ``__init__`` is the package root): each may import the
layers below it, unless ``ONLY`` narrows that. From docs/architecture.md's table, whose
rows say "the above": ``frames`` (pandas + ledger, recovery, streams), ``api``,
``compare``, ``export``, ``plot`` (plotly + the above), ``report`` (plot + the above),
``widgets`` (ipywidgets + the above), ``simulate`` (which only ``cli`` may import), ``cli``
(everything), then the entry points.
``display`` (notebook reprs and HTML fragments) is drawn from by ``api``'s reprs, so it
sits between ``frames`` and ``api``; ``wording``, ``html``, ``file_mode`` and ``examples``
are leaves (``progress`` expands sources with ``ledger``)."""

ONLY = {
    "recovery": (),
    "ledger": (*SHARED, "wording"),
    "wording": (),
    "html": (),
    "file_mode": (),
    "examples": (),
    "simulate": ("recovery", "ledger.writer"),
    "compare.align": ("recovery",),
    "compare.signatures": ("recovery",),
}
"""Modules and layers narrower than their place in ``ORDER``, with what they may import
(besides their own layer): the engine, stdlib only; the reader, only the shared modules of
the engine (which import only each other, so the reader never imports the engine through
them) and ``wording`` (its messages count things); the simulator, the engine and the line
writer it shares with the fork writer (DESIGN: "stdlib + recovery", ``ledger/writer.py``);
the session diff's alignment and signatures (architecture: "standard library only", +
recovery)."""

VERSION_ONLY = "__init__"
"""The package root, whose names are lazy: importing it (``from ledgerviz import
__version__``) imports no layer, so every layer but ``recovery`` (vendored alone) may."""


class Import(NamedTuple):
    """One ``ledgerviz`` import of a module: the module imported and the line."""

    target: str
    line: int


def module_name(path: Path) -> str:
    """Return the dotted name of a module file under ``ledgerviz/``, without the
    ``ledgerviz.`` prefix (``__init__`` for the package root)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(source: str, module: str, is_package: bool = False) -> list[Import]:
    """Return the ``ledgerviz`` modules ``source`` (module ``module``) imports at run time,
    at any depth (functions, methods, branches), relative imports resolved, without the
    ``ledgerviz.`` prefix (``__init__`` for the root); ``if TYPE_CHECKING:`` bodies skipped."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: list[Import] = []
    pending: list[ast.AST] = [ast.parse(source)]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            names = ["ledgerviz." + ".".join([*base, *filter(None, [node.module])])]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            if name == "ledgerviz":
                found.append(Import(VERSION_ONLY, node.lineno))
            elif name.startswith("ledgerviz."):
                found.append(Import(name.removeprefix("ledgerviz.").rstrip("."), node.lineno))
    return sorted(found, key=lambda item: item.line)


def layer_of(module: str) -> str:
    """Return the layer (top-level module or package) of a module name."""
    return module.split(".")[0]


RANK = {layer: rank for rank, layers in enumerate(ORDER) for layer in layers}


def within(target: str, allowed: str) -> bool:
    """Return whether module ``target`` is ``allowed`` or inside it."""
    return target == allowed or target.startswith(allowed + ".")


def allowed(module: str, target: str) -> bool:
    """Return whether ``module`` may import ``target`` (both without the prefix)."""
    if module in SHARED:
        return target in SHARED
    own = layer_of(module)
    if within(target, own):
        return True
    narrowed = ONLY.get(module, ONLY.get(own))
    if narrowed is not None:
        return any(within(target, name) for name in narrowed)
    return target == VERSION_ONLY or RANK[layer_of(target)] < RANK[own]


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """Return one line per import of ``module`` that its layer does not allow."""
    return [f"ledgerviz.{module}:{item.line} imports ledgerviz.{item.target}"
            for item in imports_of(source, module, is_package)
            if not allowed(module, item.target)]


def package_modules() -> list[tuple[str, Path]]:
    """Return (module name, file) of every module of the package."""
    return [(module_name(path), path) for path in sorted(PACKAGE.rglob("*.py"))]


def test_every_layer_is_placed() -> None:
    layers = {layer_of(module) for module, _ in package_modules()}
    assert layers == set(RANK), "place a new layer in ORDER (and in docs/architecture.md)"
    assert set(ONLY) <= set(RANK) | {module for module, _ in package_modules()}


def test_every_import_follows_the_layers() -> None:
    modules = package_modules()
    assert len(modules) > 150
    found = [problem for module, path in modules
             for problem in violations(module, path.read_text(encoding="utf-8"),
                                       path.name == "__init__.py")]
    assert not found, "\n".join(found)


def test_a_function_level_import_counts_and_a_type_only_one_does_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ledgerviz.recovery.vocab import MISSING\n"
        "if TYPE_CHECKING:\n"
        "    from ledgerviz.api import Ledger\n"
        "def read():\n"
        "    if True:\n"
        "        from ledgerviz.recovery import analyze\n"
        "    from . import table\n"
        "    from ..frames import build_frames\n"
    )
    assert imports_of(source, "ledger.reader") == [
        Import("recovery.vocab", 2), Import("recovery", 7), Import("ledger", 8),
        Import("frames", 9)]
    assert violations("ledger.reader", source) == [
        "ledgerviz.ledger.reader:7 imports ledgerviz.recovery",
        "ledgerviz.ledger.reader:9 imports ledgerviz.frames",
    ]
    assert violations("plot.timeline", source) == []
    assert violations("recovery.vocab", "from ledgerviz.recovery.events import seq_of\n") == [
        "ledgerviz.recovery.vocab:1 imports ledgerviz.recovery.events"]
    assert violations("recovery.analyze", "import ledgerviz\n") == [
        "ledgerviz.recovery.analyze:1 imports ledgerviz.__init__"]
    assert violations("frames.calls", "import ledgerviz.display.fragments\n") == [
        "ledgerviz.frames.calls:1 imports ledgerviz.display.fragments"]
    assert violations("plot.axis", "from ledgerviz.widgets import explore\n") == [
        "ledgerviz.plot.axis:1 imports ledgerviz.widgets"]
    assert violations("widgets.explorer", "from ledgerviz.simulate import loop\n") == [
        "ledgerviz.widgets.explorer:1 imports ledgerviz.simulate"]
    assert violations("simulate.writer", "from ledgerviz.ledger.reader import FileScan\n") == [
        "ledgerviz.simulate.writer:1 imports ledgerviz.ledger.reader"]
    assert violations("simulate.writer", "from ledgerviz.ledger.writer import encode_line\n") == []
