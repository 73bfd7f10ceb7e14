"""Imports only go down: the readers never import an application, and no module imports
itself back through others. Function-level imports count too (they are imports all the same).

The layers, bottom first: ``scoring``; the shared stages, ``vision.inputs`` and the reader
protocol ``vision.reading``; the readers (the game readers, then ``vision.read``, which
dispatches to them); the applications (``APPLICATIONS``).
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

APPLICATIONS = {"vision.batch", "vision.bench", "vision.carcassonne.calibrate", "vision.cli", "vision.learn",
                "vision.review", "vision.serve", "vision.store", "vision.train", "vision.avenue.template"}

#: Edges that issue 22 has still to remove, each with the reason it is there. A new upward
#: import or cycle fails the test; removing one of these makes the test ask for its removal here.
KNOWN = {
    # The Agricola reader reads with the player's set through the calibration module, which
    # is built on the reader's own stages: both belong in one vision/agricola/ package.
    ("vision.agricola", "vision.agricola_calibrate"),
    # python -m vision.detect (a measuring command kept beside the detector) reads whole photos.
    ("vision.detect", "vision.read"),
}


def module_name(path: pathlib.Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def import_graph() -> dict[str, set[str]]:
    files = [p for pkg in ("vision", "scoring") for p in (ROOT / pkg).rglob("*.py")]
    names = {module_name(p): p for p in files}
    graph = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                found |= {base} | {f"{base}.{a.name}" for a in node.names}
        graph[name] = {d for d in found if d in names and d != name}
    return graph


def edges_in_cycles(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Every edge a -> b where b leads back to a."""
    def reaches(start, goal):
        seen, todo = set(), [start]
        while todo:
            v = todo.pop()
            if v == goal:
                return True
            if v not in seen:
                seen.add(v)
                todo += graph[v]
        return False
    return {(a, b) for a, deps in graph.items() for b in deps if reaches(b, a)}


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_no_reader_or_stage_imports_an_application(graph):
    upward = {(a, b) for a, deps in graph.items() if a not in APPLICATIONS for b in deps if b in APPLICATIONS}
    assert upward - KNOWN == set()


def test_no_new_import_cycles(graph):
    cyclic = edges_in_cycles(graph)
    # an edge is allowed in a cycle only if the cycle runs through a known edge
    graph_without_known = {a: {b for b in deps if (a, b) not in KNOWN} for a, deps in graph.items()}
    assert edges_in_cycles(graph_without_known) == set(), sorted(cyclic)


def test_the_known_edges_are_still_there(graph):
    """When an edge in KNOWN is removed from the code, remove it from KNOWN too."""
    assert {(a, b) for a, b in KNOWN if b not in graph.get(a, set())} == set()


def test_the_graph_sees_imports_inside_functions(graph):
    assert "vision.inputs" in graph["vision.read"]          # read imports apply_saved inside read_photo
    assert "vision.avenue.rectify" in graph["vision.avenue.locate"]
    assert "vision.avenue.locate" not in graph["vision.avenue.rectify"]
