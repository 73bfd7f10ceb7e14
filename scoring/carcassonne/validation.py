"""Carcassonne: validation of a layout (one finding per problem).

Part of :mod:`scoring.carcassonne` (see its docstring for the conventions).
"""

from __future__ import annotations

from collections import defaultdict

from ..common import Finding, implausible
from .tiles import EDGES, GAME, Square, neighbour, opposite
from .state import Layout
from .text import from_text
from .feature_graph import _Board, features, joined_edges
from .layouts import edges_fit


# ---------------------------------------------------------------------------
# Validation

def validate(layout: Layout) -> list[Finding]:
    """Warnings about a readable but inconsistent board; it is still scored.

    Reports two tiles on one square, every pair of touching edges that do not
    match, a tile type used more often than the box holds, tiles not connected
    to the main layout, a tile that must fill a hole but does not (an abbey),
    meeples on a feature their tile does not have or may not stand on, more
    figures of one kind and colour than a player has, a figure that needs a
    follower of its colour beside it but has none (a builder, a pig), and
    more tokens in the players' hands than the box holds.

    >>> [f.message for f in validate(from_text("carcassonne; D@0,0 E@1,0"))]
    ['tile 0,0 (D) has road on its E edge, tile 1,0 (E) has field on its W edge']
    """
    board = _Board.of(layout)
    out: list[Finding] = []
    for i, p in enumerate(layout.tiles):
        first = board.squares[p.square][0]
        if first != i:
            out.append(Finding("tile-overlap",
                               f"two tiles on square {p.x},{p.y}: {layout.tiles[first].tile} and {p.tile} "
                               f"(the second is ignored)", (_tile(p.square),)))
    out += _edge_mismatches(board)
    for name, tile in layout.catalogue.items():
        used = [p for p in layout.tiles if p.tile == name]
        if len(used) > tile.count:
            out.append(Finding("too-many-tiles", f"{len(used)} tiles of type {name}, the box holds {tile.count}",
                               tuple(_tile(p.square) for p in used)))
    out += _disconnected(board)
    out += _holes_unfilled(board)
    out += _misplaced_meeples(board)
    for (colour, kind), idx in _group(layout.meeples, lambda m: (m.colour, m.kind)).items():
        figure = layout.figures[kind]
        if len(idx) > figure.per_player:
            who = "the box holds" if figure.neutral else "a player has"
            out.append(Finding("too-many-figures", f"{colour} has {len(idx)} {kind}s on the board, "
                                                   f"{who} {figure.per_player}",
                               tuple(f"meeple:{i}" for i in idx)))
    out += _lonely_figures(layout)
    for token, box in layout.box.tokens:
        held = sum(layout.held(c, token) for c in layout.players)
        if held > box:
            out.append(Finding("too-many-tokens", f"the players hold {held} {token}, the box has {box}"))
    out += implausible(GAME, {"track": dict(layout.track)})
    return out


def _tile(square: Square) -> str:
    return f"tile:{square[0]},{square[1]}"


def _group(items, key) -> dict:
    groups: dict = defaultdict(list)
    for i, item in enumerate(items):
        groups[key(item)].append(i)
    return groups


def _edge_mismatches(board: _Board) -> list[Finding]:
    out = []
    for square in board.squares:
        for edge in ("E", "S"):  # each touching pair once
            other = neighbour(square, edge)
            if other not in board.squares:
                continue
            mine, theirs = board.edge(square, edge), board.edge(other, opposite(edge))
            if not edges_fit(mine, theirs):
                out.append(Finding("edge-mismatch",
                                   f"tile {_where(board, square)} has {mine} on its {edge} edge, "
                                   f"tile {_where(board, other)} has {theirs} on its {opposite(edge)} edge",
                                   (_tile(square), _tile(other))))
    return out


def _where(board: _Board, square: Square) -> str:
    _, tile, rotation = board.squares[square]
    return f"{square[0]},{square[1]} ({tile.name}{', ' + str(rotation) if rotation else ''})"


def _disconnected(board: _Board) -> list[Finding]:
    seen: set = set()
    groups = []
    for start in board.squares:
        if start in seen:
            continue
        group, todo = [], [start]
        seen.add(start)
        while todo:
            square = todo.pop()
            group.append(square)
            for edge in EDGES:
                other = neighbour(square, edge)
                if other in board.squares and other not in seen:
                    seen.add(other)
                    todo.append(other)
        groups.append(group)
    if len(groups) < 2:
        return []
    main = max(groups, key=len)  # the first of the largest, in tile order
    apart = sorted((s for g in groups if g is not main for s in g), key=lambda s: board.squares[s][0])
    return [Finding("not-connected", f"{len(apart)} of {len(board.squares)} tiles are not connected "
                                     f"to the main layout of {len(main)}", tuple(_tile(s) for s in apart))]


def _holes_unfilled(board: _Board) -> list[Finding]:
    out = []
    for square, (_, tile, _) in board.squares.items():
        missing = [e for e in EDGES if neighbour(square, e) not in board.squares]
        if tile.fills_hole and missing:
            out.append(Finding("not-in-hole", f"tile {_where(board, square)} must fill a hole, but has no "
                                              f"neighbour to the {', '.join(missing)}", (_tile(square),)))
    return out


def _misplaced_meeples(board: _Board) -> list[Finding]:
    out = []
    layout = board.layout
    for i, m in enumerate(layout.meeples):
        name = f"meeple {i} ({m.colour} {m.kind}) on {m.feature}"
        if m.square not in board.squares:
            out.append(Finding("meeple-no-feature", f"{name}: no tile at {m.x},{m.y}",
                               (f"meeple:{i}", _tile(m.square))))
            continue
        kind = m.feature.partition(":")[0]
        matches = board.under(m)
        edge = m.feature.partition(":")[2]
        if kind == "tile" and edge in EDGES and layout.figures[m.kind].adds:
            if neighbour(m.square, edge) not in board.squares:  # a double-sized tile's other half
                out.append(Finding("meeple-no-feature", f"{name}: its other half, {edge} of {m.x},{m.y}, has no tile",
                                   (f"meeple:{i}", _tile(m.square))))
                continue
        elif kind == "tile" and m.feature == "tile":
            pass  # on the tile itself, not on a feature
        elif len(matches) != 1:
            problem = "has no such feature" if not matches else f"has {len(matches)} there; name one by its edge"
            out.append(Finding("meeple-no-feature", f"{name}: tile {_where(board, m.square)} {problem}",
                               (f"meeple:{i}", _tile(m.square))))
            continue
        if kind not in layout.figures[m.kind].stands_on:
            out.append(Finding("figure-not-allowed", f"{name}: {m.kind}s may not stand on {kind}s",
                               (f"meeple:{i}", _tile(m.square))))
        figure = layout.figures[m.kind]
        if figure.joins:
            placed = layout.tiles[board.squares[m.square][0]]
            printed = layout.catalogue[placed.tile].edges(placed.rotation)
            edges = joined_edges(m)
            if not edges or any(printed[EDGES.index(e)] != figure.joins_over for e in edges):
                out.append(Finding("figure-not-allowed", f"{name}: a {m.kind} joins two {figure.joins_over} "
                                                         f"edges of its tile, named as {figure.joins}:N+S",
                                   (f"meeple:{i}", _tile(m.square))))
        if figure.values is None and m.value:
            out.append(Finding("figure-value", f"{name}: a {m.kind} has no number printed on it, "
                                               f"but is written with #{m.value}", (f"meeple:{i}",)))
        elif figure.values is not None and not (figure.values[0] <= m.value
                                                and (figure.values[1] is None or m.value <= figure.values[1])):
            least, most = figure.values
            span = f"{least} or more" if most is None else f"{least} to {most}"
            out.append(Finding("figure-value", f"{name}: a {m.kind}'s number is {span} (written "
                                               f"{m.kind}#N), not {m.value}", (f"meeple:{i}",)))
        if figure.makes and m.feature.partition(":")[2] not in EDGES:
            out.append(Finding("figure-not-allowed", f"{name}: a {m.kind} names the {kind} edge it stands on, "
                                                     f"as {kind}:N", (f"meeple:{i}", _tile(m.square))))
    return out


def _lonely_figures(layout: Layout) -> list[Finding]:
    """Figures that need a follower of their colour on the same feature and have none."""
    out = []
    for f in features(layout):
        for i in f.meeples:
            m = layout.meeples[i]
            if not layout.figures[m.kind].with_follower:
                continue
            if not any(layout.meeples[j].colour == m.colour and layout.figures[layout.meeples[j].kind].follower
                       for j in f.meeples if j != i):
                out.append(Finding("figure-without-follower",
                                   f"meeple {i} ({m.colour} {m.kind}) on {m.feature}: no {m.colour} follower "
                                   f"shares its {f.kind}", (f"meeple:{i}", _tile(m.square))))
    return out

