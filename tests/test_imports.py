"""Imports only go down, and no module imports itself back through others. Function-level
imports count too (they are imports all the same).

The layers, bottom first:

1. ``scoring``: the rules, no image code;
2. the shared stages (:data:`SHARED`): photo decoding, the boards' geometry and outlines, the
   ONNX runtime and model registry (``vision.classify``), the user's files and a photo's inputs
   (``vision.inputs``), the reader protocol (``vision.reading``), the renderer's kit;
3. one package per game (``vision.avenue``, ``vision.agricola``, ``vision.carcassonne``): its
   reader's stages, and beside them its tools (:data:`TOOLS`: renderer, foreign proxy, training,
   calibration command, templates), which no stage imports;
4. ``vision.read``: the dispatch to every game's reader, and ``vision.detect``, the game detector
   (its second look asks the Agricola reader's board mask);
5. the applications (:data:`APPLICATIONS`).
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

GAMES = ("avenue", "agricola", "carcassonne")
TOOLS = ("render", "proxy", "train", "calibrate", "template")
SHARED = {"vision", "vision.limits", "vision.photo", "vision.geometry", "vision.quad", "vision.classify",
          "vision.truth", "vision.inputs", "vision.reading", "vision.progress", "vision.finetune",
          "vision.render", "vision.render.camera", "vision.render.draw", "vision.render.handwriting"}
#: The applications, and the packages of applications (every module in them is one).
APPLICATIONS = {"vision.batch", "vision.bench", "vision.cli", "vision.learn", "vision.review", "vision.serve",
                "vision.store", "vision.train", "vision.detect.__main__"}


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


def is_application(module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in APPLICATIONS)


def game_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "vision" and parts[1] in GAMES else None


def is_tool(module: str) -> bool:
    return game_of(module) is not None and module.split(".")[-1] in TOOLS


def is_stage(module: str) -> bool:
    """A module of a game's reader (its package included)."""
    return game_of(module) is not None and not is_tool(module)


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_module_has_its_layer(graph):
    vision = {m for m in graph if m.startswith("vision")}
    placed = SHARED | {"vision.read", "vision.detect"} | {m for m in vision if game_of(m) or is_application(m)}
    assert vision - placed == set(), "a new module: put it in a layer here"
    assert {"vision.avenue.read", "vision.agricola.read", "vision.carcassonne.read"} <= vision


def test_no_import_cycles(graph):
    assert sorted(edges_in_cycles(graph)) == []


def test_the_shared_stages_import_only_the_rules_and_each_other(graph):
    assert {(a, b) for a in SHARED for b in graph[a] if not (b in SHARED or b.startswith("scoring"))} == set()


def test_a_reader_imports_only_the_shared_stages_and_its_own_game(graph):
    """No reader imports training, a renderer, a calibration command, review, batch or bench."""
    wrong = {(a, b) for a in graph if is_stage(a) for b in graph[a]
             if not (b in SHARED or b.startswith("scoring") or (is_stage(b) and game_of(b) == game_of(a)))}
    assert wrong == set()


def test_no_game_imports_another(graph):
    assert {(a, b) for a in graph if game_of(a) for b in graph[a] if game_of(b) not in (None, game_of(a))} == set()


def test_the_dispatch_imports_readers_not_tools_nor_applications(graph):
    assert {b for a in ("vision.read", "vision.detect") for b in graph[a] if is_tool(b) or is_application(b)} == set()


def test_nothing_below_the_applications_imports_one(graph):
    below = {a for a in graph if not is_application(a) and not is_tool(a)}
    assert {(a, b) for a in below for b in graph[a] if is_application(b)} == set()


def test_the_foreign_proxies_share_nothing_with_the_renderers_and_nothing_trains_on_them(graph):
    proxies = {f"vision.{game}.proxy" for game in GAMES}
    assert proxies <= set(graph)
    assert {(p, b) for p in proxies for b in graph[p] if b.startswith("vision.render") or b.endswith(".render")} == set()
    assert {(a, b) for a in graph for b in graph[a] if b in proxies and a != "vision.render"} == set()


def test_the_graph_sees_imports_inside_functions(graph):
    assert "vision.inputs" in graph["vision.read"]          # read imports apply_saved inside read_boards
    assert "vision.agricola.calibration" in graph["vision.agricola.read"]   # inside read_agricola
    assert "vision.avenue.rectify" in graph["vision.avenue.locate"]
    assert "vision.avenue.locate" not in graph["vision.avenue.rectify"]


def test_every_package_is_listed_for_the_install():
    """A plain install carries only the packages pyproject.toml lists (see docs/development.md)."""
    tomllib = pytest.importorskip("tomllib")      # Python 3.11+

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {module_name(p.parent / "__init__.py") for pkg in ("vision", "scoring") for p in (ROOT / pkg).rglob("__init__.py")}
    assert packages - listed == set()
