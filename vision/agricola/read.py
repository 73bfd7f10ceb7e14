"""The Agricola reader: a photo of a finished farmyard in, the farm and its score card out.

::

    photo ──decode──> image ──find──> board outline ──lock──> corners ──rectify──> board frame
          ──cut──> 15 space crops + 38 fence-edge crops ──classify──> per-space heads, p(fence)
          ──assemble──> farm (+ off-board values) ──validate, prefer a legal reading──> score card

The stages, each with its parameters in one dataclass at the top:

1. **Find** (:func:`find_board`). A small segmentation network
   (``models/agricola-board.onnx``) marks the farmyard board in a 192-pixel
   copy of the photo, and looks again at each marked region cut out of the
   photo, where the board fills its view; the region's outline is fitted
   with a quadrilateral (:func:`vision.avenue.locate.fit_quad`), its long sides
   taken for the board's long sides. Where no outline leads to the board
   (a small board under glare), fainter regions are tried, their outlines
   grown, as the mask stops short of such a board's edges.
2. **Lock** (:func:`lock_to_grid`). The outline only says roughly where the
   board is; the fence slots say exactly. On the board rectified at 2.5 px/mm
   each of the 10 fence lines is looked for as a pair of parallel edges 6 mm
   apart, summed along every line near the expected one (:func:`find_line`,
   a Hough transform for one line), and the lines' 24 crossings correct the
   homography, a few times over. Where that is not sure, paths of every
   print's width are looked for in colour too
   (:class:`vision.agricola.locate.LockImage`), the crossings fitted by
   their least median. A board is accepted when its spaces' edges
   stand out (:func:`structure_score`, :attr:`FindBoard.min_score`). The
   search is short at first (:attr:`FindBoard.short_looks` looks at the fence
   lines): a lock that is not sure is weighed against the board found from the
   grid of fence lines alone (:func:`vision.agricola.board.confirm_board`), and
   only where neither is sure does the lock search on, until the search has
   spent :attr:`FindBoard.max_looks` looks in all
   (:class:`vision.agricola.locate.Looks`: a count, so a hard photo costs a
   bounded time and is read the same at any load). A photo whose board is not
   found within them is refused in one line saying what was not seen.
3. **Rectify and cut** (:func:`cut_spaces`, :func:`cut_fences`). The board is
   warped onto :data:`vision.geometry.AGRICOLA`'s frame; each space is cut
   from fence line to fence line, each fence edge as a strip along its slot
   (vertical ones turned to lie horizontally), in colour.
4. **Classify.** ``models/agricola-spaces.onnx`` reads a space: its kind,
   the house material of a room, a stable, which animal and how many (0-12,
   touching and stacked cubes included), which crop and how many, and the
   family members; its two count heads are read under an even prior
   (:func:`even_prior`): training shows big counts far more often than play
   leaves them, on purpose, and the model's leaning towards them is divided
   out. ``models/agricola-fences.onnx`` says fence or no fence, whatever the
   player's colour. Both read colour pieces normalised by the
   board's own white (:func:`normalise_colour`).
5. **Assemble** (:func:`assemble_farm`). Each space is decoded jointly, so
   that it is one the rules allow (no grain on a room, no stable on a field);
   the board is turned the right way up (the two starting rooms are in the
   left column); the scoring core's warnings are consulted, and where the
   farm as read breaks a rule and changing a few doubtful elements to their
   second reading makes it legal, that reading is preferred and flagged.
   Warnings still standing lower the confidence of what they name.

What the photo cannot show comes from the user (:func:`off_board_values`):
a side file ``PHOTO.side.json`` beside the photo, the same file batch mode
reads, and the ``read`` command's options, which win over the side file::

    {"supply": {"grain": 2, "vegetables": 1},
     "cards": {"sheep": 1, "boar": 0, "cattle": 0},
     "family_members": 5, "card_points": 7, "bonus_points": 3, "begging_cards": 0}

Every key may be left out; the names are those of the farm's JSON form
(:mod:`scoring.agricola`).

>>> from vision.agricola.offboard import off_board_values, parse_pairs
>>> off_board_values({"supply": {"grain": 2}}, {"card_points": 7})
{'supply': {'grain': 2}, 'card_points': 7}
>>> parse_pairs("grain=2,vegetables=1", "--supply", ("grain", "vegetables"))
{'grain': 2, 'vegetables': 1}
"""

from __future__ import annotations

import json
from dataclasses import replace

import cv2
import numpy as np

from scoring import agricola
from scoring.agricola import COLUMNS, EDGES, KINDS, POSITIONS, ROWS, Edge, Farm
from vision import UserError
from vision.geometry import AGRICOLA
from vision.agricola.assemble import assemble_farm, space_text, turn_readings, upright
from vision.agricola.cut import (board_white, cut_fences, cut_spaces, meadow_white, normalise_colour,
                                 rectify_board, shrink, stick_fences)
from vision.agricola.locate import Looks, find_board, not_found_reason
from vision.agricola.offboard import check_off_board, off_board_values, side_values
from vision.agricola.params import ASSEMBLE, FIND, AgricolaModels, FindBoard, MODELS
from vision.agricola.windows import fence_window, space_window
from vision.reading import Covered, GameReader


# ---------------------------------------------------------------------------
# The reader

def read_pieces(model, crops: np.ndarray, white: np.ndarray, mirrors: int = 4) -> dict[str, np.ndarray]:
    """Each head's probabilities for a batch of crops, averaged over the crops as they are and
    mirrored (left-right, top-bottom, both: the first ``mirrors`` of these four views)."""
    views = [crops, crops[:, :, ::-1], crops[:, ::-1], crops[:, ::-1, ::-1]][:mirrors]
    white = np.asarray(white, np.float32)
    if white.ndim == 2:                                # one white per crop
        white = np.tile(white, (len(views), 1))
    heads = model.predict_heads(normalise_colour(np.concatenate(views), white))
    n = len(crops)
    return {h: pred.probs.reshape(len(views), n, -1).mean(axis=0) for h, pred in heads.items()}


def even_prior(probs: dict[str, np.ndarray], seen: dict[str, list], heads=ASSEMBLE.even_prior_heads
               ) -> dict[str, np.ndarray]:
    """Each of ``heads`` read under an even prior: its probabilities divided by how often each
    label was seen in training (``seen``, from the space model's metadata: :func:`label_counts`),
    renormalised. Heads the model says nothing of are left as they are.

    >>> probs = {"animals": np.array([[0.2, 0.3, 0.5]])}
    >>> even_prior(probs, {"animals": [10, 10, 20]})["animals"].round(2).tolist()
    [[0.27, 0.4, 0.33]]
    """
    out = dict(probs)
    for head in heads:
        if head in seen:
            p = probs[head] / label_shares(seen[head])
            out[head] = p / p.sum(axis=1, keepdims=True)
    return out


def label_shares(counts) -> np.ndarray:
    """How often training saw each label of a head, as shares of the whole (each at least once):
    what :func:`even_prior` divides out.

    >>> label_shares([3, 0, 1]).round(2).tolist()
    [0.6, 0.2, 0.2]
    """
    often = np.maximum(np.asarray(counts, np.float64), 1.0)
    return often / often.sum()


def label_counts(model) -> dict[str, list]:
    """How often each head's labels were seen in training, from a model's metadata (empty if not told)."""
    return json.loads(model.session.get_modelmeta().custom_metadata_map.get("label_counts", "{}"))


def locate_farmyard(image: np.ndarray, models: AgricolaModels = MODELS, table=None, another: bool = False,
                    search: dict | None = None, params: FindBoard = FIND, beside: np.ndarray | None = None):
    """The farmyard board to read in a BGR photo (:class:`vision.agricola.locate.Found`), or None.

    With a calibration's colour ``table``, its search first (the set's meadow and paths). Then the
    board model's lock, short at first, weighed against the grid of fence lines and searched on
    where neither is sure (:func:`vision.agricola.board.confirm_board`); ``another``: the lock
    only. ``search`` (a dict) is told what was tried, for :func:`not_found_reason`, and holds the
    search's count of looks at the fence lines (``search["looks"]``, :class:`vision.agricola.locate.Looks`):
    at most :attr:`FindBoard.max_looks` in all (:attr:`FindBoard.another_looks` for ``another``),
    the first :attr:`FindBoard.short_looks` for the lock alone. ``beside``: for ``another``, the
    corners of the farmyard read (photo pixels): the board mask's regions under
    :attr:`FindBoard.another_min_area` of its area are not locked from.
    """
    from vision.agricola.board import confirm_board
    from vision.agricola.calibration import find_board_calibrated

    search = {} if search is None else search
    found = find_board_calibrated(image, table) if table is not None else None
    longer = None
    if found is None:
        # one count of looks at the fence lines for the whole search (FindBoard.max_looks): the lock is
        # short at first, the grid's search has its share, and the longer lock takes up what is left
        looks = search["looks"] = Looks(params.another_looks if another else params.max_looks)
        if not another:
            looks.allow(params.short_looks)
        elif beside is not None:
            # another farmyard on the same table is seen about as large as the one read: a card or a
            # counter the board model marks is not worth a lock (each costs 8-15 looks, 0.15-0.2 s)
            area = abs(cv2.contourArea(np.asarray(beside, np.float32).reshape(-1, 1, 2)))
            search["least_share"] = params.another_min_area * area / (image.shape[0] * image.shape[1])
        found = find_board(image, models, params, report=search)

        def longer():
            looks.allow()
            return find_board(image, models, params, report=search)
    return confirm_board(image, found, search, grid=not another, search_on=longer)


def read_agricola(image: np.ndarray, source: str, clock, side: dict | None = None,
                  off_board: dict | None = None, models: AgricolaModels = MODELS, calibration=None,
                  another: bool = False, covered: Covered | None = None):
    """Read an Agricola farmyard from a decoded photo (the stages after decoding).

    ``side`` is the photo's side file (read from beside the photo when not
    given), ``off_board`` the values given on the command line, which win.
    ``calibration`` is the player's set (:mod:`vision.agricola.calibration`): None for the user's
    own when ``scorelens calibrate agricola`` made one, False for none, or a file; with one,
    spaces and fences are read from its colour table instead of the space and fence models.
    ``another``: a farmyard besides one already read in the photo, found by the board model's own
    lock only (:func:`vision.agricola.board.confirm_board` without the grid of lines);
    ``covered``: the photo as searched before, the farmyard read then covered
    (:func:`vision.read.read_boards`), whose size says how large another is seen.
    """
    from vision.agricola.calibration import calibrated_readings, load_calibration

    table = load_calibration(calibration)
    from vision.classify import classifier
    from vision.reading import Reading

    search: dict = {}
    beside = covered.board if covered is not None else None
    found = locate_farmyard(image, models, table, another, search, beside=beside)
    if found is None:
        raise UserError.naming(source, f"no Agricola farmyard found in {source}: {not_found_reason(search)}")
    clock.lap("locate")
    rect = rectify_board(image, found.h_mm_to_img)
    small = shrink(rect)
    white = meadow_white(rect)
    clock.lap("rectify")
    spaces, fences = cut_spaces(small), cut_fences(small)
    white = board_white(rect, spaces)
    clock.lap("cut")
    if table is not None:
        space_probs, fence_p = calibrated_readings(rect, table)
    else:
        space_model = classifier(models.spaces)
        space_probs = even_prior(read_pieces(space_model, spaces, white), label_counts(space_model))
        fence_p = read_pieces(classifier(models.fences), fences, white, mirrors=1)["fence"][:, 1]
        if int((fence_p >= 0.5).sum()) > agricola.MAX_FENCES:
            # more fences than a farm holds: the model reads the print's paths; the sticks themselves
            fence_p = stick_fences(fences, white)
    clock.lap("classify")
    corners = found.corners
    room = space_probs["kind"][:, KINDS.index("room")].reshape(ROWS, COLUMNS)
    if not upright(room):
        space_probs, fence_p = turn_readings(space_probs, fence_p)
        corners = np.roll(corners, -2, axis=0)
        rect = np.ascontiguousarray(rect[::-1, ::-1])
    if side is None:
        side = side_values(source)
    values = off_board_values(check_off_board(side, f"{source} side file") if side else None, off_board)
    assembled = assemble_farm(space_probs, fence_p, values)
    if not found.camera:
        assembled = doubt_the_lock(assembled)
    clock.lap("assemble")
    card = agricola.score(assembled.state)
    clock.lap("score")
    # the board found is what the search for another farmyard beside it starts from (Covered.board)
    return Reading("agricola", source, assembled.state, assembled.confidences, assembled.flags,
                   assembled.findings, card, corners, rect, alternatives=assembled.alternatives, search=found)


def doubt_the_lock(assembled, doubt: float = ASSEMBLE.off_camera_doubt):
    """A farm read from a board locked where no camera of square pixels sees it so (a grid
    stretched one way or bent: :func:`vision.agricola.locate.as_a_camera_sees`): every space and
    fence may be cut off its place, so each element's confidence is multiplied by ``doubt``,
    every element is flagged, most doubtful first, and a warning says why.

    >>> from vision.agricola.assemble import Assembled
    >>> a = doubt_the_lock(Assembled(None, {"space:0,0": 0.9, "fence:h0,0": 0.99}, [], [], {}))
    >>> a.confidences, a.flags, a.findings[0].code
    ({'space:0,0': 0.45, 'fence:h0,0': 0.495}, ['space:0,0', 'fence:h0,0'], 'board-off-camera')
    """
    from scoring.common import Finding

    confidences = {name: c * doubt for name, c in assembled.confidences.items()}
    finding = Finding("board-off-camera", "the board was locked where no camera sees it so (its grid stretched "
                      "one way or bent): the spaces and fences may be read off their places")
    return replace(assembled, confidences=confidences, flags=sorted(confidences, key=confidences.get),
                   findings=list(assembled.findings) + [finding])


_GOOD, _FLAGGED, _GRID = (40, 200, 40), (40, 40, 235), (230, 150, 30)


def draw_agricola(reading) -> np.ndarray:
    """The rectified board with the spaces, fences and counts read drawn on it (flagged in red)."""
    img = reading.rectified.copy()
    s = img.shape[1] / AGRICOLA.width_mm
    flagged = set(reading.flags)
    font = cv2.FONT_HERSHEY_SIMPLEX
    px = lambda v: int(round(v * s))     # noqa: E731
    yard = reading.state.farmyard
    for e in EDGES:
        (x0, y0), (x1, y1) = AGRICOLA.edge_line(e.axis, e.row, e.column)
        colour = _FLAGGED if e.name in flagged else _GOOD
        if e in yard.fences:
            cv2.line(img, (px(x0), px(y0)), (px(x1), px(y1)), colour, max(2, px(1.5)), cv2.LINE_AA)
        elif e.name in flagged:
            cv2.line(img, (px(x0), px(y0)), (px(x1), px(y1)), colour, 1, cv2.LINE_AA)
    for p in POSITIONS:
        name = agricola.space_name(p)
        x0, y0, x1, y1 = AGRICOLA.space_box(*p)
        colour = _FLAGGED if name in flagged else _GOOD
        cv2.rectangle(img, (px(x0 + 1), px(y0 + 1)), (px(x1 - 1), px(y1 - 1)), colour if name in flagged else _GRID,
                      1, cv2.LINE_AA)
        text = space_text(yard[p])
        if yard[p].kind == "room":
            text = yard.house[0].upper() + text[1:] if len(text) > 1 else yard.house
        cv2.putText(img, text, (px(x0 + 2), px(y0 + 9)), font, 0.12 * s, (0, 0, 0), max(2, px(0.9)), cv2.LINE_AA)
        cv2.putText(img, text, (px(x0 + 2), px(y0 + 9)), font, 0.12 * s, colour, max(1, px(0.4)), cv2.LINE_AA)
        conf = f"{reading.confidences.get(name, 1.0):.2f}"
        cv2.putText(img, conf, (px(x0 + 2), px(y1 - 2)), font, 0.08 * s, colour, max(1, px(0.3)), cv2.LINE_AA)
    cv2.putText(img, f"total {reading.card.total}", (px(AGRICOLA.grid_x), px(AGRICOLA.height_mm - 3.5)), font,
                0.12 * s, (255, 255, 255), max(1, px(0.5)), cv2.LINE_AA)
    return img


def element_windows(rectified: np.ndarray) -> dict[str, tuple[float, float, float, float]]:
    """Where each element lies on a rectified board, in its pixels: each space from fence line
    to fence line, each fence edge its strip (what the classifiers read; for the review page).

    >>> element_windows(np.zeros((576, 896, 3), np.uint8))["space:0,0"]
    (48.0, 48.0, 208.0, 208.0)
    """
    s = rectified.shape[1] / AGRICOLA.width_mm
    out = {agricola.space_name(p): tuple(v * s for v in space_window(*p)) for p in POSITIONS}
    out.update({e.name: tuple(v * s for v in fence_window(e)) for e in EDGES})
    return out

def render_farm(farm: Farm) -> list[str]:
    """The farmyard as text lines for the readable card: spaces, with the fences between them."""
    yard = farm.farmyard
    out = [f"  house: {yard.house}"]
    cell = 5
    for r in range(ROWS + 1):
        line = "  +"
        for c in range(COLUMNS):
            line += ("=" * cell if Edge("h", r, c) in yard.fences else "-" * cell) + "+"
        out.append(line)
        if r == ROWS:
            break
        line = "  "
        for c in range(COLUMNS + 1):
            line += "#" if Edge("v", r, c) in yard.fences else "|"
            if c < COLUMNS:
                line += f"{space_text(yard[r, c]):^{cell}}"
        out.append(line)
    return out


READER = GameReader(
    "agricola", read_agricola, draw_agricola, render_farm, options=("side", "off_board", "models"),
    models=("agricola-board", "agricola-spaces", "agricola-fences"),
    off_board=("supply", "cards", "card_points", "bonus_points", "begging_cards"),
    how_to_give="--supply, --cards, --card-points, --bonus-points, --begging, PHOTO.side.json or the manifest",
    more_boards={"another": True})
