"""The Agricola calibration command: ``scorelens calibrate agricola PHOTO`` learns the player's set
(:mod:`vision.agricola.calibration`) from one photo of the calibration layout.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from scoring.agricola import ANIMALS, EDGES, HOUSES, POSITIONS
from vision import UserError
from vision.agricola.calibration import (CALIBRATE, CLASSES, Calibrate, ColourTable, FENCES, LAYOUT, PRINT,
                                         TILES, board_at, calibration_path, class_distances, edge_strip,
                                         fit_class, half_turn, light_and_glare, normalised, read_board,
                                         space_box, turned_edge)


# ---------------------------------------------------------------------------
# Calibrating

def _refuse(source: str, what: str):
    return UserError.naming(source, f"{source}: not a clean Agricola calibration layout: {what} "
                                    "(see docs/calibration.md)")


def layout_turned(f: np.ndarray, params: Calibrate = CALIBRATE) -> tuple[bool, float]:
    """Whether the calibration layout shows turned half round on the rectified board (log colour),
    and how sure: the four tiles' spaces differ from the bare meadow, which is alike throughout.
    The margin is the better reading's score over the other's."""
    def middle(p):
        x0, y0, x1, y1 = space_box(p, params.tile_inset_mm, params)
        return f[y0:y1, x0:x1].reshape(-1, 3)

    meds = {p: np.median(middle(p), axis=0) for p in POSITIONS}
    bare = [p for p in POSITIONS if p not in LAYOUT]
    scores = []
    for turn in (False, True):
        place = half_turn if turn else (lambda p: p)
        meadow = np.median([meds[place(p)] for p in bare], axis=0)
        spread = max(float(np.linalg.norm(meds[place(p)] - meadow)) for p in bare) + 0.05
        apart = min(float(np.linalg.norm(meds[place(p)] - meadow)) for p in LAYOUT if LAYOUT[p] in TILES)
        scores.append(apart / spread)
    return scores[1] > scores[0], max(scores) / max(min(scores), 1e-6)


def piece_blob(mask: np.ndarray, params: Calibrate = CALIBRATE) -> np.ndarray:
    """The largest blob of a boolean mask, opened (the empty mask if none)."""
    m = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, np.ones((params.open_px, params.open_px), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
    if n < 2:
        return np.zeros_like(mask, bool)
    return labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))


def outline_off_table(image: np.ndarray, params: Calibrate = CALIBRATE) -> np.ndarray | None:
    """The board's outline in a calibration photo (4 x 2 photo pixels), as what differs from the
    table: the colours along the photo's edge (a few clusters: wood grain, a checked cloth) are
    the table's, and the largest region unlike all of them is the board."""
    from vision.agricola.locate import shrink_to
    from vision.quad import fit_quad, refine_corners

    small, k = shrink_to(image, min(1.0, params.table_long_side / max(image.shape[:2])))
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = lab.shape[:2]
    b = max(2, int(0.03 * min(h, w)))
    ring = np.concatenate([lab[:b].reshape(-1, 3), lab[-b:].reshape(-1, 3), lab[:, :b].reshape(-1, 3),
                           lab[:, -b:].reshape(-1, 3)])
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1.0)
    cv2.setRNGSeed(0)
    _, _, centres = cv2.kmeans(ring, params.table_colours, None, criteria, 2, cv2.KMEANS_PP_CENTERS)
    d = np.min(np.linalg.norm(lab.reshape(-1, 1, 3) - centres[None], axis=2), axis=1).reshape(h, w)
    mask = (cv2.GaussianBlur(d, (0, 0), 2.0) > params.table_apart).astype(np.uint8)
    size = max(3, int(round(0.015 * max(h, w))) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((size, size), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((size, size), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    c = max(contours, key=cv2.contourArea)
    if cv2.contourArea(c) < 0.1 * mask.size:
        return None
    quad = fit_quad(c)
    return None if quad is None else ((refine_corners(quad, c) + 0.5) / k - 0.5).astype(np.float32)


def find_calibration_board(image: np.ndarray, params: Calibrate = CALIBRATE, report: dict | None = None):
    """The board of a calibration photo: as the reader finds any board, or else by its outline
    against the table (:func:`outline_off_table`), locked onto its fence lines."""
    from vision.agricola import locate, params as agri_params

    report = {} if report is None else report
    found = locate.find_board(image, report=report)
    if found is None:
        outline = outline_off_table(image, params)
        if outline is not None:
            report["deadline"] = time.process_time() + agri_params.FIND.max_seconds
            found = locate.lock_outlines(image, [outline], report=report)
            for reach in agri_params.FIND.wider_searches:
                if found is not None:
                    break
                found = locate.lock_outlines(image, [outline], params=replace(agri_params.FIND, search_mm=reach),
                                               report=report)
    return found


def learn_table(rect: np.ndarray, source: str, params: Calibrate = CALIBRATE) -> ColourTable:
    """The colour table of the set in a calibration photo's rectified board; refuses (UserError
    naming ``source`` and what is wrong) a photo that is not the calibration layout."""
    f, path = normalised(rect, None, params)
    _, glare, _ = light_and_glare(board_at(rect, params).astype(np.float32), path, params)
    glare = float(glare.max() / max(float(np.mean(path)), 1.0))
    if glare > params.max_glare:
        raise _refuse(source, f"glare on the board (a lamp's reflection adds {glare:.0%} of the paths' brightness): "
                              "photograph it in even light")
    turned, margin = layout_turned(f, params)
    if margin < 1.3:
        raise _refuse(source, "the four tiles were not found in a row along one long side "
                              f"(the two ways round score {margin:.2f} to 1)")
    place = half_turn if turned else (lambda p: p)
    edge_at = turned_edge if turned else (lambda e: e)

    def middle(p, inset):
        x0, y0, x1, y1 = space_box(place(p), inset, params)
        return f[y0:y1, x0:x1].reshape(-1, 3)

    samples = {"meadow": np.vstack([middle(p, params.tile_inset_mm) for p in POSITIONS if p not in LAYOUT])}
    for p, what in LAYOUT.items():
        if what in TILES:
            samples[what] = middle(p, params.tile_inset_mm)
    near_tiles = {place(p) for p, what in LAYOUT.items() if what in TILES}
    fenced = {edge_at(e) for e in FENCES}
    paths = [edge_strip(f, e, params.path_half_mm, params.path_along_mm, params).reshape(-1, 3) for e in EDGES
             if e not in fenced and not set(e.spaces()) & near_tiles]
    samples["path"] = np.vstack(paths)
    names = list(PRINT)
    fits = [fit_class(samples[n], params) for n in names]
    table = ColourTable(names, np.array([m for m, _ in fits]), np.array([c for _, c in fits]), {}, {})
    # the tiles must stand out from the meadow (a bare board, or tiles in the wrong spaces, do not)
    for what in TILES:
        d2, _ = class_distances(samples[what], ColourTable(["meadow"], table.means[:1], table.covs[:1], {}, {}),
                                np.zeros(3), params)
        if float(np.median(np.sqrt(d2[0]))) < params.min_separation:
            raise _refuse(source, f"the {what} tile's space looks like bare meadow")
    # the pieces: what differs from every print class on their space
    areas = {}
    player = []
    for p, what in LAYOUT.items():
        if what in TILES:
            continue
        x0, y0, x1, y1 = space_box(place(p), params.inset_mm, params)
        sub = f[y0:y1, x0:x1]
        d2, _ = class_distances(sub.reshape(-1, 3), table, np.zeros(3), params)
        far = (np.sqrt(d2[0]) > params.differs).reshape(sub.shape[:2])         # from the meadow
        blob = piece_blob(far, params)
        area = float(blob.sum()) / params.px_per_mm ** 2
        if not params.min_piece_mm2 <= area <= params.max_piece_mm2:
            where = f"space {p[0] + 1},{p[1] + 1} (row, column as printed)"
            raise _refuse(source, f"no single {what} piece found on {where}" if area < params.min_piece_mm2
                          else f"the {what} on {where} covers {area:.0f} mm2, more than one piece")
        areas[what] = area
        if what in ("person", "stable"):
            player.append(sub[blob])
        else:
            samples[what] = sub[blob]
    for e in FENCES:
        strip = edge_strip(f, edge_at(e), 2.0, (10.0, 40.0), params)
        d2, _ = class_distances(strip.reshape(-1, 3), table, np.zeros(3), params)
        far = np.sqrt(d2[:2].min(axis=0)) > params.differs             # from the meadow and the paths
        if far.mean() < 0.25:
            raise _refuse(source, f"no fence found on {e.name} (the layout has fences on the bottom right "
                                  "space's top, left and right)")
        player.append(strip.reshape(-1, 3)[far])
    samples["player"] = np.vstack(player)
    names = list(CLASSES)
    fits = [fit_class(samples[n], params) for n in names]
    grounds = {"meadow": np.median(np.vstack([middle(p, params.core_mm) for p in POSITIONS if p not in LAYOUT]), axis=0)}
    grounds |= {what: np.median(middle(p, params.core_mm), axis=0) for p, what in LAYOUT.items() if what in TILES}
    info = {"turned": bool(turned), "turn_margin": round(float(margin), 2),
            "grounds": {k: v.round(4).tolist() for k, v in grounds.items()},
            "path_linear": path.round(3).tolist(),
            "reference": {"path": np.median(samples["path"], axis=0).round(4).tolist(),
                          "meadow": np.median(samples["meadow"], axis=0).round(4).tolist()}}
    return ColourTable(names, np.array([m for m, _ in fits]), np.array([c for _, c in fits]), areas, info)


def calibrate(photo, out=None, params: Calibrate = CALIBRATE) -> dict:
    """Learn the set in a calibration photo (a file or a BGR array) and save it (``out``,
    default :func:`calibration_path`). Returns what was done, with how the calibrated reader
    reads the calibration photo's own spaces and fences back (``reread``, of 15 + 38)."""
    from vision.agricola import cut, locate
    from vision import photo as photo_stage

    started = time.perf_counter()
    if isinstance(photo, np.ndarray):
        source, image = "<array>", photo_stage.from_array(photo).image
    else:
        source, image = str(photo), photo_stage.read_photo_file(photo).image
    search: dict = {}
    found = find_calibration_board(image, params, search)
    if found is None:
        raise _refuse(source, f"no farmyard board found ({locate.not_found_reason(search)})")
    rect = cut.rectify_board(image, found.h_mm_to_img)
    table = learn_table(rect, source, params)
    reread = reread_layout(rect, table, params)
    table.info.update({"photo": source, "reread": reread, "seconds": round(time.perf_counter() - started, 1)})
    dest = Path(out) if out else calibration_path()
    table.save(dest)
    return {"written": str(dest), "turned": table.info["turned"], "reread": reread, "areas": table.areas,
            "seconds": time.perf_counter() - started}


def reread_layout(rect: np.ndarray, table: ColourTable, params: Calibrate = CALIBRATE) -> int:
    """How many of the calibration layout's 15 spaces and 38 edges the calibrated reader reads
    as laid out (each space for its kind and the pieces on it, whatever the rules say)."""
    spaces, fences = read_board(rect, table, params)
    turned = table.info.get("turned", False)
    place = half_turn if turned else (lambda p: p)
    edge_at = turned_edge if turned else (lambda e: e)
    good = 0
    for p in POSITIONS:
        got = spaces[place(p)]
        what = LAYOUT.get(p)
        want = {"kind": "room" if what in HOUSES else "field" if what == "field" else "empty"}
        if what in ANIMALS:
            want |= {"animal": what, "animals": 1}
        elif what in ("grain", "vegetables"):
            want |= {"crop_seen": what}
        elif what == "stable":
            want |= {"player": 1}
        elif what == "person":
            want |= {"player": 1}
        if what in HOUSES:
            want |= {"material": what}
        good += all(got.get(k) == v for k, v in want.items()) and (what is not None or got.get("animals", 0) == 0)
    fenced = {edge_at(e) for e in FENCES}
    good += sum((fences[i] >= 0.5) == (e in fenced) for i, e in enumerate(EDGES))
    return int(good)


# ---------------------------------------------------------------------------
# The command

def cmd_calibrate(args) -> int:
    """``scorelens calibrate agricola PHOTO [--out FILE] [--reset]``."""
    if args.reset:
        from vision.inputs import reset_calibration

        return reset_calibration(args.out, "agricola", "scorelens read reads Agricola farms with the shipped models again")
    if not args.photo:
        raise UserError(None, "calibrate agricola needs the photo of your calibration layout (or --reset)")
    if getattr(args, "method", None):
        raise UserError(None, "--method applies to carcassonne only")
    r = calibrate(args.photo, args.out)
    areas = ", ".join(f"{k} {v:.0f}" for k, v in r["areas"].items())
    print(f"{args.photo}: the calibration layout found{' (turned half round)' if r['turned'] else ''}; "
          f"pieces in mm2: {areas}; read back {r['reread']} of 53 spaces and fences ({r['seconds']:.1f} s)")
    print(f"wrote {r['written']}; scorelens read --game agricola uses it from now on")
    return 0
