"""The board lock checked against what a camera can see (vision.agricola.locate): a homography
that no camera of square pixels makes (a grid stretched one way, a corner bent) is caught, a
camera's passes, and a bent lock is refitted as a camera's."""

import math

import cv2
import numpy as np

from vision.agricola import locate
from vision.agricola.params import FIND
from vision.agricola.windows import board_corners_mm, crossings
from vision.geometry import AGRICOLA as G

SIZE = (1340, 960)          # the photo's width and height


def _camera(turn, f35: float = 26.0, distance: float = 450.0, shift=(0.0, 0.0), size=SIZE) -> np.ndarray:
    """The board-mm -> pixel homography of a pinhole camera of square pixels: aimed at the board's
    centre from ``distance`` mm, turned by the rotation vector ``turn``, its principal point
    ``shift`` pixels off the photo's centre."""
    w, h = size
    f = f35 / 43.27 * math.hypot(w, h)
    r = cv2.Rodrigues(np.array(turn, float))[0]
    t = np.array([0.0, 0.0, distance]) - r @ np.array([G.width_mm / 2, G.height_mm / 2, 0.0])
    k = np.array([[f, 0, w / 2 + shift[0]], [0, f, h / 2 + shift[1]], [0, 0, 1.0]])
    return k @ np.c_[r[:, 0], r[:, 1], t]


def _stretched(sx: float, sy: float) -> np.ndarray:
    """Board mm -> board mm: the grid stretched about its centre, ``sx`` along the long side, ``sy`` across."""
    return np.array([[sx, 0, (1 - sx) * G.width_mm / 2], [0, sy, (1 - sy) * G.height_mm / 2], [0, 0, 1.0]])


OBLIQUE = (0.3, 0.4, 1.0)   # tilted about an axis along neither of the board's sides
SQUARE_ON = (0.02, 0.01, 0.3)


def test_a_cameras_homography_passes_wherever_its_principal_point():
    for turn in (OBLIQUE, SQUARE_ON, (0.5, 0.0, 0.0)):
        assert locate.camera_error(_camera(turn), SIZE) < 0.005
        assert locate.seen_by_a_camera(_camera(turn), SIZE)
    # a photo cropped around the board: the principal point where the board's centre is seen
    cropped = _camera(OBLIQUE, shift=(200.0, -150.0))
    assert locate.camera_error(cropped, SIZE) < 0.005


def test_a_grid_stretched_six_percent_one_way_is_caught():
    for turn in (OBLIQUE, SQUARE_ON):
        true = _camera(turn)
        for sx, sy in ((1.06, 1.0), (1.0, 1.06), (1 / 1.06, 1.0)):
            stretched = true @ _stretched(sx, sy)
            assert locate.camera_error(stretched, SIZE) > FIND.camera_tolerance
            assert not locate.seen_by_a_camera(stretched, SIZE)
    # the same stretch both ways is only a nearer board: every camera allows it
    assert locate.seen_by_a_camera(_camera(OBLIQUE) @ _stretched(1.06, 1.06), SIZE)


def test_the_stretch_measured_square_on_is_the_aspect_seen():
    stretched = _camera(SQUARE_ON) @ _stretched(1.05, 1.0)
    assert abs(locate.camera_error(stretched, SIZE) - math.log(1.05)) < 0.01


def _bent(h: np.ndarray, corner: int = 0, by_mm=(5.0, 5.0)) -> np.ndarray:
    """``h`` with one of the board's corners pulled ``by_mm`` (in board mm), the others kept."""
    mm = board_corners_mm()
    moved = mm.copy()
    moved[corner] += np.float32(by_mm)
    return h @ cv2.getPerspectiveTransform(mm, moved).astype(np.float64)


def _photo(h_mm_to_img: np.ndarray, px_per_mm: float = 4.0, seed: int = 0) -> np.ndarray:
    """A farmyard of pale meadow with dark 5 mm paths on its fence lines, on a grey table, as the
    camera ``h_mm_to_img`` sees it."""
    rng = np.random.default_rng(seed)
    w, h = int(G.width_mm * px_per_mm), int(G.height_mm * px_per_mm)
    flat = np.empty((h, w, 3), np.uint8)
    flat[:] = (110, 190, 150)
    half = 2.5 * px_per_mm
    for c in range(G.cols + 1):
        x = G.line_x(c) * px_per_mm
        cv2.rectangle(flat, (int(x - half), int(G.line_y(0) * px_per_mm - half)),
                      (int(x + half), int(G.line_y(G.rows) * px_per_mm + half)), (40, 70, 90), -1)
    for r in range(G.rows + 1):
        y = G.line_y(r) * px_per_mm
        cv2.rectangle(flat, (int(G.line_x(0) * px_per_mm - half), int(y - half)),
                      (int(G.line_x(G.cols) * px_per_mm + half), int(y + half)), (40, 70, 90), -1)
    flat = np.clip(flat + rng.normal(0, 4, flat.shape), 0, 255).astype(np.uint8)
    to_photo = h_mm_to_img @ np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0])
    return cv2.warpPerspective(flat, to_photo, SIZE, borderValue=(128, 128, 128))


def _worst_crossing_mm(h: np.ndarray, truth: np.ndarray) -> float:
    back = cv2.perspectiveTransform(cv2.perspectiveTransform(crossings()[None], h), np.linalg.inv(truth))[0]
    return float(np.linalg.norm(back - crossings(), axis=1).max())


def test_a_bent_lock_is_refitted_as_a_cameras_and_a_true_one_kept():
    truth = _camera(OBLIQUE)
    view = locate.LockImage(_photo(truth))
    bent = _bent(truth)
    assert not locate.seen_by_a_camera(bent, SIZE)
    assert _worst_crossing_mm(bent, truth) > 3.0
    refit, used, camera = locate.as_a_camera_sees(view, bent, 20)
    assert camera and used >= 20
    assert _worst_crossing_mm(refit, truth) < 1.0
    kept, kept_used, camera = locate.as_a_camera_sees(view, truth, 24)
    assert camera and kept_used == 24 and kept is truth


def test_a_lock_no_camera_makes_is_kept_when_nothing_better_is_found():
    """Never refused for its camera alone: on a photo with no fence lines, the stretched lock
    comes back as it was, said to be seen by no camera."""
    stretched = _camera(OBLIQUE) @ _stretched(1.08, 1.0)
    blank = locate.LockImage(np.full((SIZE[1], SIZE[0], 3), 128, np.uint8))
    kept, used, camera = locate.as_a_camera_sees(blank, stretched, 20)
    assert kept is stretched and used == 20 and not camera
    unchecked = locate.as_a_camera_sees(blank, stretched, 20, FIND.__class__(camera_check=False))
    assert unchecked[2]


def test_a_farm_read_from_a_lock_no_camera_makes_is_flagged_whole(monkeypatch):
    """Read all the same, but every element in doubt and flagged, with a warning saying why; the
    same photo locked as a camera sees it carries no such warning."""
    from dataclasses import replace
    from pathlib import Path

    import vision.agricola.read as reader
    from vision import read

    photo = Path(__file__).resolve().parents[1] / "samples" / "agricola-photo-1.jpg"
    plain = read.read_photo(photo, "agricola", use_saved=False)
    real = reader.locate_farmyard
    monkeypatch.setattr(reader, "locate_farmyard", lambda *a, **k: replace(real(*a, **k), camera=False))
    doubted = read.read_photo(photo, "agricola", use_saved=False)
    assert "board-off-camera" not in [f.code for f in plain.findings]
    assert "board-off-camera" in [f.code for f in doubted.findings]
    assert doubted.state == plain.state and set(doubted.flags) == set(doubted.confidences)
    assert all(doubted.confidences[n] < plain.confidences[n] for n in plain.confidences)


def test_a_board_found_by_the_grid_of_fence_lines_is_read_too(monkeypatch):
    """A board that the grid of fence lines finds (vision.agricola.board.confirm_board) is the same
    kind of find as the lock's and is read (photo 30 of the own bench's seed; a find without the
    camera's word failed the reading once)."""
    import vision.agricola.board as board
    from vision import read
    from vision.render import photo_seed, render_jpeg

    finds = []
    real = board.confirm_board
    monkeypatch.setattr(board, "confirm_board", lambda *a, **k: finds.append(real(*a, **k)) or finds[-1])
    data, truth = render_jpeg("agricola", photo_seed(1, 30), megapixels=12, split="test")
    reading = read.read_photo(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR), "agricola")
    assert finds and isinstance(finds[-1], locate.Found) and finds[-1].camera
    assert np.abs(reading.corners - np.float32(truth["corners"])).max() < 40
    assert "board-off-camera" not in [f.code for f in reading.findings]
