"""The Carcassonne reader: a photo of a finished layout in, every player's score out.

::

    photo ──layout map──> where the layout lies, and how large a tile is
          ──lattice──> the tile grid (a homography from lattice squares to pixels)
          ──cut──> one colour crop per lattice square
          ──classify──> empty, or tile type A-X and rotation; the meeples on it
          ──decode──> the layout, touching edges matched and the box's counts kept
          ──meeples──> each meeple's colour, and the feature it stands on
          ──score──> every player's card (the score track's points come as input)

The layout has no printed frame, so the lattice is found from the tiles
themselves (:func:`find_lattice`). A small network (``models/carcassonne-layout.onnx``)
says where tiles lie and how large they are; the tiles' straight edges there
vote for two vanishing points that undo the perspective; the lines then
repeat with the tile pitch (or half of it, where roads and city walls cross
the middles of tiles), which gives the lattice, fitted to the lines by least
squares.

A lattice square is read by a small network (``models/carcassonne-tiles.onnx``)
from a 48 x 48 colour crop: ``empty`` or one of the 96 ``TYPE:ROTATION``
labels, and a 12 x 12 map of the meeples on it (none, or a colour, standing
or lying). The same model tells the tile lattice from its half-pitch lines
(:func:`choose_lattice`: it was taught that a window off the lattice holds no
tile). The layout is then decoded jointly (:func:`decode_layout`): where the
best guess breaks the rules (touching edges that do not match, more tiles of
a type than the box holds) and a next guess does not, the layout decides, and
the square is flagged. Each meeple (:func:`find_meeples`; one lying across a
tile edge counted once, :func:`across_seams`) is put on the feature of its
tile under it (:func:`feature_at`), its pose deciding near a boundary.

Calibration (:func:`calibrate`, ``scorelens calibrate carcassonne PHOTO``)
adapts the tile model to a user's own set from one photo of the 24 types
laid out in :data:`CALIBRATION_ROWS`.

Every parameter is in one of the frozen dataclasses of its stage (``Decode``,
``Regions``, ``Lattice``, ``Cut``, ``MeepleFinding``, ``Calibrate``; what is flagged for
review: ``Review``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from scoring import carcassonne as rules
from vision.carcassonne.assemble import CALIBRATED_REVIEW, REVIEW, Assembled, assemble_layout
from vision.carcassonne.calibration import (CALIBRATED_TILES, art_regions, calibration_sha256, load_calibration,
                                           new_to_art, unlike_exemplar)
from vision.carcassonne.classify import (MEEPLE_CUT, MeepleModel, TileModel, _present, choose_lattice, cut_meeples,
                                         read_cells, refit_to_tiles)
from vision.carcassonne.cut import _apply, cut_tiles, normalise_tiles
from vision.carcassonne.decode import CALIBRATED_DECODE, DECODE, EMPTY, canonical_rotation
from vision.carcassonne.lattice import (LATTICE, Lattice, LatticeFit, find_lattice, layout_map, layout_parts,
                                        look_closer)
from vision.carcassonne.models import CarcassonneModels, MODELS
from vision.carcassonne.pennants import emblems_of, look_for_pennants, look_for_photo_emblem
from vision.carcassonne.meeples import CALIBRATED_MEEPLES, MEEPLES, flat_patches, piece_colours, piece_shapes
from vision.carcassonne.presence import tile_presence
from vision.carcassonne.regions import part_map
from vision.carcassonne.track import parse_track
from vision.reading import GameReader, LookedBriefly, SearchCut


# ---------------------------------------------------------------------------
# Reading a photo

@dataclass(frozen=True)
class Read:
    """Choices of reading a photo: with a calibration, and without one on art the tile model does not know."""

    art_regions: bool = False       # under an exemplar calibration, a meeple's feature from the parts as the user's
    #                                 own tiles draw them (:func:`art_regions`: the proxy's roads fitted 0.085 wide
    #                                 against our 0.055), not as ours do. Off: on tuning seeds 101/102 the meeples
    #                                 found were put on the right feature about as often (the tile right: 276 / 299
    #                                 against 277 / 300; the meeple model's pose decides near a boundary), though
    #                                 the position alone says more with them (265 against 253 on seed 101)
    photo_emblem: bool = True       # without a calibration's emblem, pennant twins the tile model is unsure of are
    #                                 decided with the emblem the photo's own twins share
    #                                 (:func:`vision.carcassonne.pennants.look_for_photo_emblem`)
    unknown_art: float = 0.1        # without a calibration, tile presence reads the squares too (as it does with one)
    #                                 where this share of the squares read as tiles are read unsurely
    #                                 (:func:`unknown_art`): art the tile model does not know. Our own art (40 photos
    #                                 of seed 1): 0.00-0.04; the proxy's tuning seed 101: 0.14-0.58


READ = Read()


def unknown_art(cells: dict, empty: int, sure: float = 0.9) -> float:
    """The share of the squares read as tiles (``cells``: square -> (probabilities, ...)) whose best tile the
    tile model gives less than ``sure``: how little it knows the art (0 where no square is read as a tile).

    >>> unknown_art({(0, 0): (np.array([0.0, 0.95, 0.05]),), (1, 0): (np.array([0.1, 0.6, 0.3]),),
    ...              (2, 0): (np.array([0.9, 0.05, 0.05]),)}, empty=0)
    0.5
    """
    if not cells:
        return 0.0
    probs = np.stack([p for p, *_ in cells.values()])
    tiled = probs[:, empty] < 0.5
    if not tiled.any():
        return 0.0
    best = np.delete(probs[tiled], empty, axis=1).max(axis=1)
    return float(np.mean(best < sure))


def read_layout(image: np.ndarray, model: TileModel, layout_model: str = MODELS.layout, clock=None,
                params: Lattice = LATTICE, presence: bool | None = None, brief: bool = False,
                notes: dict | None = None):
    """Find the lattice and read its squares: ``(fit, cells)``, or ``(None, {})`` when no layout shows.

    While no lattice found has squares that the tile model takes for tiles,
    the lines are looked for again in the other ways of :attr:`Lattice.retries` and (with a calibration)
    :attr:`Lattice.last_way`
    (a table's own pattern can outvote the tiles' edges), then on each group of
    tiles that the layout model sees apart (:func:`layout_parts`: clutter can
    look like tiles); the lattice that looks most like tiles is read.

    After a first reading, the lattice is fitted again to the lines of the
    squares read as tiles (:func:`refit_to_tiles`) and the squares read again,
    while that moves the tiles by more than a few percent of a tile. At last
    the tiles are read once more turned every way (:attr:`Lattice.turned`), and, with a
    calibration that found the set's pennant emblem, each square read as one of a pair of
    pennant twins is decided by whether the emblem is on it (:mod:`vision.carcassonne.pennants`);
    without one, by the emblem the photo's own twins share, where the tile model is unsure
    (:attr:`Read.photo_emblem`).

    ``presence``: a square that the tile model calls empty but that holds a tile by
    :func:`tile_presence` (unlike the table, where the layout model sees tiles) is a tile:
    a layout of art the model never saw does not fall apart into islands. By default
    (None) with a calibration, and without one only on art the tile model does not know
    (:attr:`Read.unknown_art`): on our own art it finds "tiles" on the table beside the
    layout (40 photos of seed 1: exact scores 95% -> 75% had it read every photo).

    ``brief``: only the first way of finding lines is tried, on the whole layout map; where its
    squares do not look like tiles, :class:`vision.reading.SearchCut` is raised rather than
    searching on (a reader asked briefly while the game is being detected).

    ``notes``, where given, is told the layout map (``"layout_map"``) and whether tile presence read the
    squares (``"presence"``): the meeple stage asks presence of the squares beside the layout; also
    whether presence read them because the tile model did not know the art (``"unknown_art"``: a
    layout so read that is refused is read again without it) and what the photo's own emblem decided
    (``"photo_emblem"``, :func:`vision.carcassonne.pennants.look_for_photo_emblem`).
    """
    first = layout_map(image, layout_model, params)
    if notes is not None:
        notes.update(layout_map=first, presence=False)
    chosen = None
    mine = model.calibration is not None and model.calibration.method == "exemplars"
    accept = params.calibrated_accept if mine and params.by_likeness else params.accept

    # a busy table (a chequered cloth) can hide the tiles' lines
    # the last way (CPU) only for a user's own set: uncalibrated it found nothing more on our art,
    # and it slowed every refusal of another game's photo
    ways = ((),) + params.retries + ((params.last_way,) if params.last_way and mine else ())

    def looked(lmap, ways=ways) -> bool:
        """Try the ``ways`` of finding lines on ``lmap``; whether a lattice's squares looked like tiles."""
        nonlocal chosen
        for way in ways:
            fit = find_lattice(image, lmap, replace(params, **dict(way)))
            for candidate in [fit] + fit.others if fit is not None else []:   # runners-up while the best looks empty
                tried = choose_lattice(image, candidate, model, params=params)
                if chosen is None or tried[2] > chosen[2]:
                    chosen = tried
                if chosen[1] >= accept or (mine and chosen[2] >= params.calibrated_enough):
                    return True
        return False

    whole = look_closer(image, first, layout_model, params)
    if brief:
        if not looked(whole, ways[:1]):
            raise SearchCut("no lattice of tiles at a first look")
    elif mine and not looked(whole, ways[:1]):
        # under a calibration every way is tried on the whole and on each group of tiles seen
        # apart (clutter beside the layout) until a lattice is like the user's tiles: each way
        # on all of them before the next, slower way (tuning seed 101: of the 6 photos where the
        # first way did not find the lattice on the whole, 4 were found by it on a part, 2 by
        # the next way on a part; the last way is the slowest)
        parts = [look_closer(image, part, layout_model, params) for part in layout_parts(first, params)]
        for lmap, way in [(lmap, (way,)) for way in ways for lmap in [whole] + parts][1:]:
            if looked(lmap, way):
                break
    elif not mine and not looked(whole):
        for part in layout_parts(first, params):    # each group of tiles seen apart from the others
            if looked(look_closer(image, part, layout_model, params)):
                break
    if clock is not None:
        clock.lap("lattice")
    if chosen is None:
        return None, {}
    fit = chosen[0]
    given = presence
    if presence is None:         # by default with a calibration, or on art the tile model does not know
        presence = model.calibration is not None
    present = tile_presence(image, first) if presence else None
    cells = read_cells(image, fit, model, params, presence=present)
    empty = model.labels.index(EMPTY)
    if present is None and given is None and unknown_art(cells, empty) >= READ.unknown_art:
        # art the tile model does not know (no calibration): its "empty" is not to be trusted either
        present = tile_presence(image, first)
        with_presence = read_cells(image, fit, model, params, presence=present)
        if sum(p[empty] < 0.5 for p, *_ in with_presence.values()) < params.presence_most:
            cells = with_presence
            if notes is not None:
                notes["unknown_art"] = True
        else:                   # it took the table for tiles: the tile model's reading stands
            present = None
    if notes is not None:
        notes["presence"] = present is not None
    for _ in range(params.refits):
        tiles = [sq for sq, (p, *_) in cells.items() if p[empty] < 0.5]
        if not tiles:
            break
        again = refit_to_tiles(fit, tiles, params)
        centres = np.array(tiles, float) + 0.5
        moved = np.abs(_apply(again.cell_to_image, centres) - _apply(fit.cell_to_image, centres)).max()
        if moved < 0.04 * fit.cell_px:
            break
        fit = again
        cells = read_cells(image, fit, model, params, presence=present)
    tiles = [sq for sq, (p, *_) in cells.items() if p[empty] < 0.5]
    if params.turned and tiles:     # the tiles read once more, turned every way
        r = model.predict(cut_tiles(image, fit.cell_to_image, tiles), turned=True)
        probs = _present(r.probs, np.ones(len(tiles), bool), empty)    # each was read as a tile already
        cells.update({sq: (probs[n], r.meeples[n], r.embedding[n]) for n, sq in enumerate(tiles)})
    emblems = emblems_of(model.calibration)
    if emblems is not None:         # pennant twins decided apart, by the set's own emblem
        cells = look_for_pennants(image, fit.cell_to_image, cells, model.labels, emblems)
    elif READ.photo_emblem:         # ... or by the emblem the photo's own twins share
        cells = look_for_photo_emblem(image, fit.cell_to_image, cells, model.labels, empty=empty, notes=notes)
    return fit, cells


@dataclass(frozen=True)
class Evidence:
    """What a layout read must show to be taken for a Carcassonne layout at all (another game's
    board, or a table, yields a few doubtful "tiles" whose edges do not agree): see
    :func:`layout_evidence`."""

    min_tiles: int = 4                 # tiles in the layout, at least (a finished game has dozens)
    max_mismatched: float = 0.25       # share of touching edges that do not match, at most
    min_confidence: float = 0.35       # mean confidence of the tiles read, at least
    min_evidence: float = 3.5          # the tiles' confidences added up, at least: a few sure tiles (another
    #                                    game's board read as a layout gives 5-7 doubtful ones, adding up to 1.9-3)
    needs_city: bool = True            # some tile shows a city: every game starts from one that does (an Avenue
    #                                    sheet's roads, cell by cell, read as ten sure road tiles whose edges agree)


EVIDENCE = Evidence()


def edge_agreement(layout: rules.Layout) -> tuple[int, int]:
    """``(touching, mismatched)``: the edges where two tiles of ``layout`` touch, and how many
    of them do not fit (:func:`scoring.carcassonne.edges_fit`: an abbey's edge fits anything).

    >>> edge_agreement(rules.from_text("carcassonne; D@0,0 E@0,-1:180 U@1,0:90"))
    (2, 0)
    >>> edge_agreement(rules.from_text("carcassonne; D@0,0 U@1,0"))
    (1, 1)
    """
    catalogue = layout.catalogue
    at = {(t.x, t.y): catalogue[t.tile].edges(t.rotation) for t in layout.tiles if t.tile in catalogue}
    touching = mismatched = 0
    for (x, y), edges in at.items():
        for i, edge in ((1, "E"), (2, "S")):
            other = at.get(rules.neighbour((x, y), edge))
            if other is None:
                continue
            touching += 1
            mismatched += not rules.edges_fit(edges[i], other[(i + 2) % 4])
    return touching, mismatched


def layout_evidence(layout: rules.Layout, confidences: dict, params: Evidence = EVIDENCE) -> str | None:
    """Why the layout read is no Carcassonne layout (too few tiles, edges that disagree,
    tiles read without confidence), or None when it shows enough evidence of one.

    >>> start = rules.from_text("carcassonne 3; E@0,0 B@1,0 B@0,1 B@1,1 B@2,1")
    >>> layout_evidence(start, {f"tile:{t.x},{t.y}": 0.99 for t in start.tiles}) is None
    True
    >>> layout_evidence(start, {f"tile:{t.x},{t.y}": 0.6 for t in start.tiles})
    '5 tiles read, their confidences adding up to 3.0, less than 3.5'
    >>> cloisters = rules.from_text("carcassonne 3; B@0,0 B@1,0 B@0,1 B@1,1 B@2,1")
    >>> layout_evidence(cloisters, {f"tile:{t.x},{t.y}": 0.99 for t in cloisters.tiles})
    'none of the 5 tiles read shows a city (every game starts from one that does)'
    """
    n = len(layout.tiles)
    if n < params.min_tiles:
        return f"{n} tile{'s' if n != 1 else ''} read, fewer than {params.min_tiles}"
    touching, mismatched = edge_agreement(layout)
    if touching and mismatched / touching > params.max_mismatched:
        return f"{mismatched} of {touching} touching tile edges do not match"
    tiles = [confidences[f"tile:{t.x},{t.y}"] for t in layout.tiles if f"tile:{t.x},{t.y}" in confidences]
    if tiles and float(np.mean(tiles)) < params.min_confidence:
        return f"the tiles are read with a mean confidence of {float(np.mean(tiles)):.2f}"
    evidence = sum(tiles)
    if tiles and evidence < params.min_evidence:
        return f"{n} tiles read, their confidences adding up to {evidence:.1f}, less than {params.min_evidence}"
    if params.needs_city and not any(part.kind == "city" for t in layout.tiles
                                     for part in layout.catalogue[t.tile].parts):
        return f"none of the {n} tiles read shows a city (every game starts from one that does)"
    return None


def _not_found(source: str, why: str | None = None):
    """``no Carcassonne layout found in PHOTO``: the message names the photo itself."""
    from vision import UserError

    return UserError.naming(source, f"no Carcassonne layout found in {source}" + (f" ({why})" if why else ""))


def read_carcassonne(image: np.ndarray, source: str, clock, track=None, side: dict | None = None,
                     models: CarcassonneModels = MODELS, calibration=None, edition: int | None = None,
                     brief: bool = False):
    """Read a Carcassonne layout from a decoded photo (the stages after decoding).

    ``track`` holds each player's points on the score track (a dict, or
    ``"red=54,blue=61"``); without it, the side file's ``"track"`` is used
    (``side``, the photo's ``NAME.side.json``: ``{"track": {"red": 54}, "edition": 2}``).
    ``calibration``: a :class:`Calibration`, a file, False for none; by
    default the user's own (``scorelens calibrate``) if there is one.
    ``brief``: the lattice is looked for at a first look only (:func:`read_layout`); a photo whose
    layout is not seen there is refused with :class:`vision.reading.LookedBriefly`.
    """
    from vision import UserError
    from vision.reading import Reading

    side = side or {}
    if not isinstance(side, dict):
        raise UserError(source, "the side file must hold a JSON object")
    points = parse_track(track if track is not None else side.get("track"))
    edition = edition if edition is not None else side.get("edition", 3)
    try:
        layout_rules = rules.Rules(int(edition))
    except (TypeError, ValueError) as e:
        raise UserError(source, f"edition: {e}") from None
    calib = load_calibration(calibration)
    model = TileModel(models.tiles, calib)
    seen: dict = {}
    try:
        fit, cells = read_layout(image, model, models.layout, clock, brief=brief, notes=seen)
    except SearchCut as cut:
        raise LookedBriefly.naming(source, f"no Carcassonne layout found in {source} ({cut})") from None
    if fit is None:
        raise _not_found(source)
    clock.lap("classify")
    meeple_model = MeepleModel(models.meeples)
    def poses(at):
        at = np.asarray(at, np.float64)
        probs, foot = meeple_model.predict(cut_meeples(image, fit.cell_to_image, at))
        foot = foot * MEEPLE_CUT.side                   # window sides -> tiles
        for _ in range(MEEPLE_CUT.looks - 1):           # looked at again, the window on the foot found
            _, more = meeple_model.predict(cut_meeples(image, fit.cell_to_image, at + foot))
            foot = foot + more * MEEPLE_CUT.side
        return probs, foot
    mine = calib is not None and calib.method == "exemplars"

    def views(squares):
        """The squares' crops as the tile model sees them (what both cues of the user's art compare)."""
        return normalise_tiles(cut_tiles(image, fit.cell_to_image, squares))

    def unlike_art(squares, tiles, at):
        """How much more the photo differs from the user's own tile at ``at`` than over the tile."""
        return unlike_exemplar(calib, views(squares),
                               [model.labels.index(f"{t}:{canonical_rotation(t, r)}") for t, r in tiles], at)

    def foreign(squares, at):
        """How far the photo's patch at ``at`` is from every patch of the user's art."""
        return new_to_art(calib, views(squares), at)

    def assembled_layout() -> Assembled:
        """The squares read put together, or :func:`_not_found` where they show no layout."""
        present = None
        if not seen.get("presence") and seen.get("layout_map") is not None:
            # (where presence read the squares, it found no tile in those read as empty)
            def present(squares):
                """Whether each square holds a tile by :func:`tile_presence` (the table's colours learnt when first asked)."""
                if "by_table" not in seen:
                    seen["by_table"] = tile_presence(image, seen["layout_map"])
                return seen["by_table"](cut_tiles(image, fit.cell_to_image, squares), fit.cell_to_image, squares)
        assembled = assemble_layout(cells, model.labels, tuple(points.items()), layout_rules, poses=poses,
                                    decode=CALIBRATED_DECODE if mine else DECODE,
                                    meeple_params=CALIBRATED_MEEPLES if mine else MEEPLES,
                                    review=CALIBRATED_REVIEW if mine else REVIEW,
                                    unlike_art=unlike_art if mine else None, new_to_art=foreign if mine else None,
                                    regions=art_regions(calib) if mine and READ.art_regions else None,
                                    solid=lambda at: flat_patches(image, fit.cell_to_image, at),
                                    colours=lambda at: piece_colours(image, fit.cell_to_image, at),
                                    shapes=lambda at: piece_shapes(image, fit.cell_to_image, at), present=present)
        if not assembled.layout.tiles:
            raise _not_found(source)
        # another game's board: refused (judged on the tiles as decoded, before any misfit was dropped)
        why = layout_evidence(*(assembled.as_decoded or (assembled.layout, assembled.confidences)))
        if why:
            raise _not_found(source, why)
        return assembled

    try:
        assembled = assembled_layout()
    except UserError:
        if not seen.get("unknown_art"):
            raise
        # tile presence, asked because the tile model did not know the art, made squares of the table
        # or of doubtful tiles a layout that is refused: the tile model's own reading is read instead
        seen = {}
        fit, cells = read_layout(image, model, models.layout, clock, presence=False, notes=seen)
        if fit is None:
            raise _not_found(source)
        assembled = assembled_layout()
    clock.lap("assemble")
    card = rules.score(assembled.layout)
    clock.lap("score")
    corners, rectified = _frame_and_picture(image, fit, assembled)
    reading = Reading("carcassonne", source, assembled.layout, assembled.confidences, assembled.flags,
                      assembled.findings, card, corners, rectified, alternatives=assembled.alternatives,
                      why=dict(assembled.why))
    if calib is not None:               # the calibration it was read with, as a model adapted to this set
        reading.models[CALIBRATED_TILES] = calibration_sha256(calibration)
        reading.adapted.append(CALIBRATED_TILES)
    return reading


#: The rectified layout drawn for --debug: pixels per tile, and the most pixels on its longer side.
PICTURE_TILE_PX, PICTURE_MAX_PX = 96, 2400


def _frame_and_picture(image: np.ndarray, fit: LatticeFit, assembled: Assembled):
    """The layout's frame (corners TL TR BR BL in the image) and the layout rectified (a tile
    :data:`PICTURE_TILE_PX` pixels, half a tile around it)."""
    import cv2

    x0, y0 = assembled.origin
    xs = [p.x + x0 for p in assembled.layout.tiles]
    ys = [p.y + y0 for p in assembled.layout.tiles]
    a, b, c, d = min(xs), min(ys), max(xs) + 1, max(ys) + 1
    corners = _apply(fit.cell_to_image, np.array([[a, b], [c, b], [c, d], [a, d]], float)).astype(np.float32)
    px = min(PICTURE_TILE_PX, PICTURE_MAX_PX / (max(c - a, d - b) + 1))
    m = 0.5
    to_cell = np.array([[1 / px, 0, a - m + 0.5 / px], [0, 1 / px, b - m + 0.5 / px], [0, 0, 1]])
    size = (int(round((c - a + 2 * m) * px)), int(round((d - b + 2 * m) * px)))
    rect = cv2.warpPerspective(image, fit.cell_to_image @ to_cell, size,
                               flags=cv2.INTER_AREA | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return corners, rect


def draw_carcassonne(reading) -> np.ndarray:
    """The rectified layout with the lattice, each tile's letter and an arrow to its
    printed north, and each meeple (flagged elements in red)."""
    import cv2

    img = reading.rectified.copy()
    layout = reading.state
    xs = [p.x for p in layout.tiles]
    ys = [p.y for p in layout.tiles]
    cols, rows = max(xs) + 1, max(ys) + 1
    px = img.shape[1] / (cols + 1.0)
    off = 0.5 * px
    flagged = set(reading.flags)
    good, bad, grid = (40, 170, 40), (30, 30, 230), (230, 150, 30)
    font = cv2.FONT_HERSHEY_SIMPLEX
    for i in range(cols + 1):
        cv2.line(img, (int(off + i * px), int(off)), (int(off + i * px), int(off + rows * px)), grid, 1)
    for j in range(rows + 1):
        cv2.line(img, (int(off), int(off + j * px)), (int(off + cols * px), int(off + j * px)), grid, 1)
    for p in layout.tiles:
        name = f"tile:{p.x},{p.y}"
        colour = bad if name in flagged else good
        cx, cy = off + (p.x + 0.5) * px, off + (p.y + 0.5) * px
        dx, dy = [(0, -1), (1, 0), (0, 1), (-1, 0)][p.rotation // 90]
        tip = (int(cx + dx * 0.38 * px), int(cy + dy * 0.38 * px))
        cv2.arrowedLine(img, (int(cx), int(cy)), tip, colour, max(1, int(px / 32)), cv2.LINE_AA, tipLength=0.35)
        cv2.putText(img, p.tile, (int(cx - 0.3 * px), int(cy + 0.35 * px)), font, px / 70, (255, 255, 255),
                    max(2, int(px / 20)), cv2.LINE_AA)
        cv2.putText(img, p.tile, (int(cx - 0.3 * px), int(cy + 0.35 * px)), font, px / 70, colour,
                    max(1, int(px / 40)), cv2.LINE_AA)
    ink = {"red": (40, 40, 220), "blue": (200, 90, 30), "green": (40, 160, 40), "yellow": (30, 210, 240),
           "black": (20, 20, 20)}
    for i, m in enumerate(layout.meeples):
        tile = next(t for t in layout.tiles if (t.x, t.y) == (m.x, m.y))
        u, v = _feature_point(tile.tile, tile.rotation, m.feature, layout.expansions)
        cx, cy = int(off + (m.x + u) * px), int(off + (m.y + v) * px)
        r = max(3, int(px / 9))
        cv2.circle(img, (cx, cy), r, ink.get(m.colour, (255, 0, 255)), -1, cv2.LINE_AA)
        cv2.circle(img, (cx, cy), r, bad if f"meeple:{i}" in flagged else (255, 255, 255), 2, cv2.LINE_AA)
        cv2.putText(img, m.feature.split(":")[0][:2], (cx + r, cy - r), font, px / 160, (255, 255, 255), 1,
                    cv2.LINE_AA)
    return img


def _feature_point(name: str, rotation: int, feature: str, expansions=("base",)) -> tuple[float, float]:
    """A point of the tile (as it lies) on ``feature``: the middle of its part in the part map."""
    tile = rules.load_catalogue(expansions)[name]
    kind, _, where = feature.partition(":")
    parts = [i for i, q in enumerate(tile.parts_at(rotation)) if q.kind == kind and (not where or q.touches(where))]
    m = part_map(name, tuple(expansions))
    if not parts:
        return 0.5, 0.5
    ys, xs = np.nonzero(m == parts[0])
    n = m.shape[0]
    k = int(np.argmin((xs - xs.mean()) ** 2 + (ys - ys.mean()) ** 2))
    u, v = (xs[k] + 0.5) / n, (ys[k] + 0.5) / n
    for _ in range(rotation // 90):          # printed -> as it lies: one clockwise quarter turn at a time
        u, v = 1.0 - v, u
    return u, v


NORTH_GLYPHS = {0: "^", 90: ">", 180: "v", 270: "<"}


def render_layout(layout: rules.Layout) -> list[str]:
    """The layout as read, one line per row: each tile's letter and where its printed north
    points, ``.`` for a hole; then the meeples.

    >>> print("\\n".join(render_layout(rules.from_text("carcassonne; D@0,0 E@0,-1:180 U@1,0:90; red@0,0:road:E"))))
         0  1
      -1  Ev .
       0  D^ U>
    meeples: red on road:E of 0,0
    """
    if not layout.tiles:
        return ["(no tiles)"]
    at = {(p.x, p.y): p for p in layout.tiles}
    xs = range(min(x for x, _ in at), max(x for x, _ in at) + 1)
    ys = range(min(y for _, y in at), max(y for _, y in at) + 1)
    out = ["     " + " ".join(f"{x:<2}" for x in xs).rstrip()]
    for y in ys:
        cells = [f"{at[(x, y)].tile}{NORTH_GLYPHS[at[(x, y)].rotation]}" if (x, y) in at else ". " for x in xs]
        out.append(f"  {y:>2}  " + " ".join(cells).rstrip())
    if layout.meeples:
        out.append("meeples: " + ", ".join(f"{m.colour} on {m.feature} of {m.x},{m.y}" for m in layout.meeples))
    return out


READER = GameReader(
    "carcassonne", read_carcassonne, draw_carcassonne, render_layout,
    options=("side", "track", "models", "calibration", "edition"),
    models=("carcassonne-layout", "carcassonne-tiles", "carcassonne-meeples"),
    off_board=("track",), how_to_give="--track, PHOTO.side.json or the manifest's track column",
    looks_briefly=True)
