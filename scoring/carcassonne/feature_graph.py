"""Carcassonne: features, the tile parts joined across edges.

Part of :mod:`scoring.carcassonne` (see its docstring for the conventions).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache

from .tiles import (AROUND, COMPLETE_WITH_ROADS, EDGES, GATE_EDGES, Part, SURROUNDED, Square, TileType,
    WILD_EDGES, facing_half, neighbour, opposite, rotate_edge)
from .state import Layout, Meeple
from .text import from_text


# ---------------------------------------------------------------------------
# Features: tile parts joined across edges

@dataclass(frozen=True)
class Feature:
    """A road, city, field, cloister, garden or river on the board, joined
    across tiles.

    ``parts`` are ``(x, y, i)``: part ``i`` of the tile at ``(x, y)``.
    ``complete`` is true for a road, city or field with no open edge and a
    cloister or garden with all 8 neighbours. ``meeples`` are indices into
    the layout's meeples (every figure on it, neutral ones included). For a
    field, ``cities`` are the indices (in :func:`features`) of the cities it
    borders; for a cloister or garden, ``neighbours`` counts the tiles around.
    ``counts`` sums what the parts print (pennants, inn, cathedral, wine, siege).
    """

    kind: str
    parts: tuple[tuple[int, int, int], ...]
    tiles: tuple[Square, ...]
    complete: bool
    open_edges: int
    counts: tuple[tuple[str, int], ...] = ()
    meeples: tuple[int, ...] = ()
    cities: tuple[int, ...] = ()
    neighbours: int = 0

    def count(self, name: str) -> int:
        """A count summed over the parts (``pennants``), 0 when absent."""
        return dict(self.counts).get(name, 0)

    @property
    def pennants(self) -> int:
        return self.count("pennants")


class _UnionFind:
    """Disjoint sets with path halving: just enough to join tile parts."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, a):
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


@lru_cache(maxsize=64)
def _squares(layout: Layout) -> dict:
    squares = {}
    for i, p in enumerate(layout.tiles):
        squares.setdefault(p.square, (i, layout.catalogue[p.tile], p.rotation))
    for m in layout.meeples:  # bridges and ferries join edges of their tile
        figure = layout.figures.get(m.kind)
        edges = joined_edges(m)
        if figure is not None and figure.joins and m.square in squares and edges:
            i, tile, rotation = squares[m.square]
            squares[m.square] = (i, _joined(tile, rotation, figure.joins, edges), rotation)
    for m in layout.meeples:  # a mark that adds a part inside its tile (a haunted castle), or inside
        figure = layout.figures.get(m.kind)  # its tile and the one across the edge it names (a German castle)
        if figure is None or not figure.adds:
            continue
        edge = m.feature.partition(":")[2]
        covered = [m.square] + ([neighbour(m.square, edge)] if edge in EDGES else [])
        if all(s in squares for s in covered):
            name = f"{figure.adds}@{m.x},{m.y}" if len(covered) > 1 else ""
            for square in covered:
                i, tile, rotation = squares[square]
                parts = tuple(replace(p, counts=tuple(sorted({**dict(p.counts), figure.adds: 1}.items())))
                              if p.kind == figure.stamps else p for p in tile.parts)
                squares[square] = (i, replace(tile, parts=parts + (Part(figure.adds, named=name),)), rotation)
    for m in layout.meeples:  # city gates turn a city edge into a gate
        figure = layout.figures.get(m.kind)
        edge = m.feature.partition(":")[2]
        if figure is not None and figure.makes and m.square in squares and edge in EDGES:
            i, tile, rotation = squares[m.square]
            printed = EDGES.index(rotate_edge(edge, (360 - rotation) % 360))
            if tile.printed_edges[printed] == m.feature.partition(":")[0]:
                kinds = tuple(figure.makes if k == printed else e for k, e in enumerate(tile.printed_edges))
                squares[m.square] = (i, replace(tile, printed_edges=kinds), rotation)
    return squares


def joined_edges(meeple: "Meeple") -> tuple[str, ...]:
    """The two edges a joining figure names (``road:N+S``), or ``()``.

    >>> joined_edges(Meeple("neutral", "bridge", 0, 0, "road:N+S"))
    ('N', 'S')
    """
    edges = tuple(meeple.feature.partition(":")[2].split("+"))
    return edges if len(edges) == 2 and set(edges) <= set(EDGES) and edges[0] != edges[1] else ()


def _joined(tile: TileType, rotation: int, kind: str, edges: tuple[str, ...]) -> TileType:
    """The tile with one part of ``kind`` over ``edges`` (as on the board), merged with
    the parts of that kind that reach them; the other parts keep their order."""
    printed = {rotate_edge(e, (360 - rotation) % 360) for e in edges}
    merged = [j for j, p in enumerate(tile.parts) if p.kind == kind and printed & set(p.edges)]
    counts: Counter = Counter()
    for j in merged:
        counts.update(dict(tile.parts[j].counts))
        printed |= set(tile.parts[j].edges)
    part = Part(kind, tuple(e for e in EDGES if e in printed), counts=tuple(sorted(counts.items())))
    keep = [j for j in range(len(tile.parts)) if j not in merged]
    index = {old: new for new, old in enumerate(keep)}
    parts = [replace(tile.parts[j], cities=tuple(index[c] for c in tile.parts[j].cities)) for j in keep]
    edges_now = tuple(kind if e in printed else k for e, k in zip(EDGES, tile.printed_edges))
    return replace(tile, printed_edges=edges_now, parts=tuple(parts) + (part,))


@dataclass
class _Board:
    """The layout as squares: the first tile on each square, rotated."""

    layout: Layout
    squares: dict  # Square -> (placement index, TileType, rotation)

    @classmethod
    def of(cls, layout: Layout) -> "_Board":
        return cls(layout, _squares(layout))

    def parts(self, square: Square) -> tuple[Part, ...]:
        _, tile, rotation = self.squares[square]
        return tile.parts_at(rotation)

    def edge(self, square: Square, edge: str) -> str:
        _, tile, rotation = self.squares[square]
        return tile.edges(rotation)[EDGES.index(edge)]

    def walled(self, square: Square, where: str) -> bool:
        """Whether ``where`` (an edge or half-edge) is a gate or faces an edge that
        ends every feature reaching it (an abbey's, a gate)."""
        edge = where.split(".")[0]
        other = neighbour(square, edge)
        return self.edge(square, edge) in GATE_EDGES or (
            other in self.squares and self.edge(other, opposite(edge)) in WILD_EDGES + GATE_EDGES)

    def partner(self, square: Square, part: Part, where: str) -> tuple[int, int, int] | None:
        """The part of the same kind across ``where`` (an edge or half-edge)."""
        other = neighbour(square, where.split(".")[0])
        if other not in self.squares or self.walled(square, where):
            return None
        facing = facing_half(where) if "." in where else opposite(where)
        for j, q in enumerate(self.parts(other)):
            if q.kind == part.kind and facing in (q.halves if "." in where else q.edges):
                return (*other, j)
        return None

    def under(self, meeple: Meeple) -> list[int]:
        """The parts of the meeple's tile that its feature name fits (one, if it is well placed).

        A name without an edge (``cloister``, ``garden``, ``field``) means the
        part of that kind inside the tile, if there is one.
        """
        if meeple.square not in self.squares:
            return []
        kind, _, where = meeple.feature.partition(":")
        where = where.split("+")[0]  # a bridge or a ferry: the part it makes reaches its first edge
        parts = [(j, p) for j, p in enumerate(self.parts(meeple.square)) if p.kind == kind]
        if not where and any(p.inside for _, p in parts):
            return [j for j, p in parts if p.inside]
        return [j for j, p in parts if not where or p.touches(where)]

    def locate(self, meeple: Meeple) -> tuple[int, int, int] | None:
        """The part a meeple stands on, or None when its tile has no such feature."""
        found = self.under(meeple)
        return (*meeple.square, found[0]) if len(found) == 1 else None


def features(layout: Layout) -> tuple[Feature, ...]:
    """Every road, city, field, cloister, garden and river on the board,
    ordered by the first tile (in the layout's order) and part that holds it.
    An edge that faces an abbey is closed.

    >>> [(f.kind, f.tiles, f.complete) for f in features(from_text("carcassonne; A@0,0 U@0,1 W@0,2:180"))
    ...  if f.kind == "road"]
    [('road', ((0, 0), (0, 1), (0, 2)), True), ('road', ((0, 2),), False), ('road', ((0, 2),), False)]
    """
    return _features(layout)


@lru_cache(maxsize=64)
def _features(layout: Layout) -> tuple[Feature, ...]:
    board = _Board.of(layout)
    sets = _UnionFind()
    open_edges: Counter = Counter()
    order = []
    for square, (index, _, _) in board.squares.items():
        for j, part in enumerate(board.parts(square)):
            node = (*square, j)
            order.append(((index, j), node))
            sets.find(node)
            for where in part.edges + part.halves:
                other = board.partner(square, part, where)
                if other is None and not board.walled(square, where):
                    open_edges[node] += 1
                elif other is not None:
                    sets.union(node, other)
    twins: dict = defaultdict(list)  # tunnel tokens: two of one colour join their roads
    for m in layout.meeples:
        figure = layout.figures.get(m.kind)
        node = board.locate(m) if figure is not None and figure.pairs else None
        if node is not None:
            twins[(m.kind, m.colour)].append(node)
    for nodes in twins.values():
        for node in nodes[1:]:
            sets.union(node, nodes[0])
    named: dict = {}  # parts of one kind and name are one feature (the City of Carcassonne)
    for square in board.squares:
        for j, part in enumerate(board.parts(square)):
            if part.named:
                sets.union((*square, j), named.setdefault((part.kind, part.named), (*square, j)))
    groups: dict = defaultdict(list)
    for _, node in sorted(order):
        groups[sets.find(node)].append(node)
    ids = {root: i for i, root in enumerate(groups)}
    on_part = defaultdict(list)
    for i, m in enumerate(layout.meeples):
        node = board.locate(m)
        if node is not None:
            on_part[sets.find(node)].append(i)
    out = []
    for root, nodes in groups.items():
        parts = [board.parts(n[:2])[n[2]] for n in nodes]
        kind = parts[0].kind
        tiles = tuple(sorted({n[:2] for n in nodes}, key=lambda s: (s[1], s[0])))
        counts: Counter = Counter()
        for p in parts:
            counts.update(dict(p.counts))
        cities = sorted({ids[sets.find((*n[:2], c))] for n, p in zip(nodes, parts) for c in p.cities})
        opened = sum(open_edges[n] for n in nodes)
        neighbours = 0
        if parts[0].inside and kind in SURROUNDED:  # the squares around all its tiles (a German castle: 10)
            ring = {(x + dx, y + dy) for x, y in tiles for dx, dy in AROUND} - set(tiles)
            neighbours = len(ring & board.squares.keys())
            complete = neighbours == len(ring)
        else:
            complete = opened == 0
        out.append(Feature(kind, tuple(nodes), tiles, complete, opened, tuple(sorted(counts.items())),
                           tuple(on_part[root]), tuple(cities), neighbours))
    for k, f in enumerate(out):
        if f.kind in COMPLETE_WITH_ROADS:
            out[k] = replace(f, complete=all(r.complete for r in out if r.kind == "road" and f.tiles[0] in r.tiles))
    return tuple(out)

