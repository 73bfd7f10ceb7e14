"""Which game a photo shows: a cheap cue first, then the readers' own checks.

``scorelens read PHOTO`` without ``--game`` (and ``batch`` without it) does
not know the game. It asks, in this order:

1. **The cue** (:func:`game_cue`): a tiny ONNX classifier
   (``models/game-detector.onnx``, trained by ``python -m vision.train
   --game detector``) looks at the photo shrunk to 256 x 192 pixels and
   says how likely each game is (:func:`photo_cue`). It costs a few
   milliseconds. Where it is unsure, it takes a second look
   (:func:`second_look`): the Agricola reader's board mask (its first
   stage, a few milliseconds more) says whether a farmyard-sized region is
   there at all, and the classifier looks again at a view cut around that
   region, as it was trained to (a small farmyard among clutter shows larger).
2. **The readers' own checks**, most likely game first
   (:func:`reading_order`): each reader refuses a photo that is not its
   game (Avenue: the sheet's printed grid; Agricola: the grid crossings of
   the farmyard; Carcassonne: enough tiles whose edges agree,
   :func:`vision.carcassonne.read.layout_evidence`). The first reader that finds
   its board reads the photo. Where the cue does not hold its game likely
   (:class:`Asking`), a reader that can (Carcassonne) looks briefly first,
   and searches on only after the others were asked. A wrong cue therefore costs time (the wrong
   reader's look), and the game only where that reader takes another
   game's board for its own (docs/reading.md).

When ``--game`` is given and its reader finds nothing, the other readers are
asked (most likely first), and the one that finds its board names what the
photo shows instead (:func:`refusal`):
``no Carcassonne layout found in X.jpg; it looks like an Avenue sheet``.

>>> reading_order({"avenue": 0.1, "agricola": 0.7, "carcassonne": 0.2})
['agricola', 'carcassonne', 'avenue']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

#: The games the detector tells apart, in the order of its outputs.
GAMES = ("agricola", "avenue", "carcassonne")

#: The models the detector may run: the cue's, and the Agricola board mask of its second look.
MODELS = ("game-detector", "agricola-board")

#: What each game's board is called in a message.
BOARD_NAMES = {"agricola": "an Agricola farmyard", "avenue": "an Avenue sheet",
               "carcassonne": "a Carcassonne layout"}


@dataclass(frozen=True)
class Detect:
    """Parameters of the cue."""

    model: str = "game-detector"   # models/NAME.onnx
    width: int = 256               # the photo is shrunk to width x height (portrait photos turned first):
    height: int = 192              # the size a model is trained for (a model's own input size wins)


DETECT = Detect()


@dataclass(frozen=True)
class SecondLook:
    """When and how the cue looks again (:func:`second_look`). The region is the largest that the
    Agricola reader's board mask marks (:func:`farmyard_region`), as a share of the photo. Chosen on
    the tuning sets (own art of set 2, the proxies' tuning seeds); see models/game-detector.md."""

    sure: float = 0.99            # the first look's likeliest game at this probability or more: taken as it is
    no_farmyard: float = 0.005    # a region smaller than this (none, or specks): Agricola asked last
    farmyard: float = 0.15        # a region this large or larger: Agricola asked first (no other board
    #                               marks so much of the mask; a farmyard that fills the view confuses the cue)
    zoom_from: float = 0.03       # a region this large or larger is looked at again, in a view cut around it
    zoom_width: float = 0.55      # the region's share of that view's width (the detector trained on views
    #                               of a third to three quarters: vision.train.zoom_view)


SECOND_LOOK = SecondLook()


@dataclass(frozen=True)
class Asking:
    """How the readers are asked once the cue has spoken (:func:`vision.read.read_photo` without a game)."""

    brief_below: float = 0.9      # a reader that can look briefly (:attr:`vision.reading.GameReader.looks_briefly`:
    #                               Carcassonne, whose whole search refusing another game's photo costs 4-7 s
    #                               of CPU, its brief look about 0.5 s) does so where the cue gives its game
    #                               less than this, and searches on only after the other readers were asked.
    #                               Chosen on the tuning sets' CPU costs: 0.8-0.95 alike, 0.99 and 0.7 worse


ASKING = Asking()


def small_photo(image: np.ndarray, params: Detect = DETECT) -> np.ndarray:
    """A BGR photo -> ``(height, width, 3)`` uint8, landscape, shrunk by area.

    A portrait photo is shrunk first and turned after (turning 12 MP cost 25 ms).
    A large photo is first shrunk by a whole factor (each k x k block averaged: OpenCV's
    fast path for whole factors) to at least the target, then by area to it. Every pixel
    counts, as in the small photos the detector was trained on, and at 12 MP it costs half
    of thinning (every k-th pixel) to four times the target, which it replaces (14.6 against
    30.2 ms median on the 180 photos of ``/work/sets/mix7-*``, 2 busy cores, load 7.5).

    >>> small_photo(np.zeros((3000, 4000, 3), np.uint8)).shape
    (192, 256, 3)
    >>> small_photo(np.zeros((4000, 3000, 3), np.uint8)).shape
    (192, 256, 3)
    >>> big = np.zeros((3072, 4096, 3), np.uint8); big[::2, ::2] = 200      # a fine pattern: its mean, not aliased
    >>> int(small_photo(big).min()), int(small_photo(big).max())
    (50, 50)
    """
    import cv2

    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    portrait = image.shape[0] > image.shape[1]
    width, height = (params.height, params.width) if portrait else (params.width, params.height)
    h, w = image.shape[:2]
    k = max(1, int(min(w / width, h / height)))
    if k > 1:
        image = cv2.resize(image[:h - h % k, :w - w % k], ((w - w % k) // k, (h - h % k) // k),
                           interpolation=cv2.INTER_AREA)
    small = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(small.transpose(1, 0, 2)) if portrait else small      # turned once small


def normalise_small(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 small photos -> ``(N, 3, H, W)`` float32: each photo less its own
    mean colour, divided by its own spread, so the light and the white balance matter little.

    >>> x = normalise_small(np.full((1, 4, 4, 3), 90, np.uint8))
    >>> x.shape, float(abs(x).max())
    ((1, 3, 4, 4), 0.0)
    """
    x = batch.astype(np.float32)
    x = x - x.mean(axis=(1, 2), keepdims=True)
    x = x / (x.reshape(len(x), -1).std(axis=1).reshape(-1, 1, 1, 1) + 8.0)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


@lru_cache(maxsize=4)
def _session(model: str):
    """The detector's onnxruntime session (one thread, as every model here) and its labels."""
    import json

    import onnxruntime as ort

    from vision.classify import MODELS_DIR, RUNTIME

    path = model if model.endswith(".onnx") else str(MODELS_DIR / f"{model}.onnx")
    options = ort.SessionOptions()
    options.intra_op_num_threads = RUNTIME.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    labels = json.loads(session.get_modelmeta().custom_metadata_map["labels"])
    return session, tuple(labels)


def photo_cue(image: np.ndarray, params: Detect = DETECT) -> dict[str, float]:
    """How likely each game is, by the detector alone, from the photo (a BGR array, or a view of
    one) shrunk to the size the model takes: game -> probability."""
    session, labels = _session(params.model)
    height, width = session.get_inputs()[0].shape[2:]
    x = normalise_small(small_photo(image, replace(params, width=width, height=height))[None])
    logits = session.run(None, {session.get_inputs()[0].name: x})[0][0].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    return {label: float(v) for label, v in zip(labels, p)}


def game_cue(image: np.ndarray, params: Detect = DETECT, look: SecondLook = SECOND_LOOK) -> dict[str, float]:
    """How likely each game is (game -> probability): the detector's first look at the whole
    photo (:func:`photo_cue`), and where it is unsure, its second look (:func:`second_look`)."""
    cue = photo_cue(image, params)
    if max(cue.values()) >= look.sure:
        return cue
    return second_look(image, cue, params, look)


def farmyard_region(image: np.ndarray) -> tuple[float, np.ndarray | None]:
    """The largest region that the Agricola reader's board mask (:func:`vision.agricola.locate.board_mask`)
    marks as board: its share of the photo, and its box ``(x0, y0, x1, y1)`` in photo pixels (None
    where the mask marks nothing)."""
    import cv2

    from vision.agricola.locate import board_mask
    from vision.agricola.params import FIND

    prob, k = board_mask(image)
    count, _, stats, _ = cv2.connectedComponentsWithStats((prob > FIND.mask_threshold).astype(np.uint8), connectivity=8)
    if count <= 1:
        return 0.0, None
    i = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h, area = (int(v) for v in stats[i])
    return area / prob.size, np.array([x, y, x + w, y + h], np.float64) / k


def board_view(image: np.ndarray, box: np.ndarray, width_share: float = SECOND_LOOK.zoom_width) -> np.ndarray:
    """A 4:3 view of ``image`` (upright where the photo is) around ``box`` ``(x0, y0, x1, y1)``: the
    box ``width_share`` of the view's width (or 90% of its height, where that is larger), centred
    on it and moved inside the photo, as :func:`vision.train.zoom_view` cuts the detector's training views.

    >>> board_view(np.zeros((300, 400, 3), np.uint8), np.array([100, 100, 155, 130])).shape
    (75, 100, 3)
    >>> board_view(np.zeros((300, 400, 3), np.uint8), np.array([0, 0, 400, 300])).shape
    (300, 400, 3)
    """
    h, w = image.shape[:2]
    portrait = h > w
    x0, y0, x1, y1 = (float(v) for v in box)
    bw, bh = (y1 - y0, x1 - x0) if portrait else (x1 - x0, y1 - y0)
    side = max(bw / width_share, bh * 4 / 3 / 0.9)
    vw, vh = (side * 3 / 4, side) if portrait else (side, side * 3 / 4)
    vw, vh = min(int(round(vw)), w), min(int(round(vh)), h)
    left = int(np.clip(round((x0 + x1 - vw) / 2), 0, w - vw))
    top = int(np.clip(round((y0 + y1 - vh) / 2), 0, h - vh))
    return image[top:top + vh, left:left + vw]


def weigh_farmyard(cue: dict[str, float], share: float, look: SecondLook = SECOND_LOOK) -> dict[str, float]:
    """The cue, weighed by the largest region of the Agricola board mask (``share`` of the photo):
    below :attr:`SecondLook.no_farmyard` Agricola is made least likely (probability 0), from
    :attr:`SecondLook.farmyard` most likely (0.6, the other games sharing 0.4 in their order);
    between the two the cue is as it was.

    >>> weigh_farmyard({"agricola": 0.7, "avenue": 0.1, "carcassonne": 0.2}, 0.0)
    {'agricola': 0.0, 'avenue': 0.3333333333333333, 'carcassonne': 0.6666666666666666}
    >>> reading_order(weigh_farmyard({"agricola": 0.2, "avenue": 0.1, "carcassonne": 0.7}, 0.4))
    ['agricola', 'carcassonne', 'avenue']
    >>> weigh_farmyard({"agricola": 0.2, "avenue": 0.1, "carcassonne": 0.7}, 0.05)["agricola"]
    0.2
    """
    others = sum(p for g, p in cue.items() if g != "agricola")
    if "agricola" not in cue or others <= 0 or look.no_farmyard <= share < look.farmyard:
        return dict(cue)
    first = 0.0 if share < look.no_farmyard else 0.6
    return {g: first if g == "agricola" else (1 - first) * p / others for g, p in cue.items()}


def second_look(image: np.ndarray, cue: dict[str, float], params: Detect = DETECT,
                look: SecondLook = SECOND_LOOK) -> dict[str, float]:
    """The cue of an unsure first look, looked at again: the Agricola reader's board mask
    (:func:`farmyard_region`) weighs Agricola (:func:`weigh_farmyard`), and a farmyard-sized
    region (:attr:`SecondLook.zoom_from`, short of a sure one) is looked at in a view around it
    (:func:`board_view`); the two looks' probabilities are multiplied."""
    share, box = farmyard_region(image)
    cue = weigh_farmyard(cue, share, look)
    if box is None or not look.zoom_from <= share < look.farmyard:
        return cue
    zoom = photo_cue(board_view(image, box, look.zoom_width), params)
    both = {g: p * zoom.get(g, 0.0) for g, p in cue.items()}
    total = sum(both.values())
    return {g: p / total for g, p in both.items()} if total > 0 else cue


def reading_order(cue: dict[str, float]) -> list[str]:
    """The games to try, most likely first."""
    return sorted(cue, key=lambda g: -cue[g])


#: What a reader asked by :func:`ask_in_turn` answers where it looked briefly and stopped short.
SHORT = "short"


def ask_in_turn(cue: dict[str, float], ask, looks_briefly, params: Asking = ASKING):
    """Ask the readers as detection does, most likely first (:func:`reading_order`): ``ask(game,
    brief)`` returns what ``game``'s reader made of the photo, None where it refused it, or
    :data:`SHORT` where it was asked briefly and stopped short. A reader that can look briefly
    (``looks_briefly(game)``) does so where the cue gives its game less than
    :attr:`Asking.brief_below`; those that stopped short search on after the others were asked,
    in the same order. ``(game, answer)`` of the first reader that read the photo, or None.

    >>> answers = {("carcassonne", True): SHORT, ("avenue", False): None, ("carcassonne", False): "a layout"}
    >>> asked = []
    >>> ask = lambda game, brief: asked.append((game, brief)) or answers[game, brief]
    >>> ask_in_turn({"carcassonne": 0.6, "avenue": 0.4}, ask, lambda game: game == "carcassonne")
    ('carcassonne', 'a layout')
    >>> asked
    [('carcassonne', True), ('avenue', False), ('carcassonne', False)]
    """
    short = []
    for game in reading_order(cue):
        answer = ask(game, looks_briefly(game) and cue[game] < params.brief_below)
        if answer is SHORT:
            short.append(game)
        elif answer is not None:
            return game, answer
    for game in short:
        answer = ask(game, False)
        if answer is not None:
            return game, answer
    return None


_NOT_FOUND = re.compile(r"\bno (Avenue sheet|Agricola farmyard|Carcassonne layout) found in ")


def is_not_found(error: Exception) -> bool:
    """Whether a reader's error says that its board is not in the photo (a refusal), rather
    than something else wrong (a bad side file, a bad option).

    >>> from vision import UserError
    >>> is_not_found(UserError(None, "no Avenue sheet found in a.jpg")), is_not_found(UserError("a.jpg", "edition: 7"))
    (True, False)
    """
    return bool(_NOT_FOUND.search(str(error)))


def refusal(message: str, game: str, found: str | None) -> str:
    """A reader's refusal, with the game whose reader found its board in the photo instead.

    >>> refusal("no Carcassonne layout found in X.jpg", "carcassonne", "avenue")
    'no Carcassonne layout found in X.jpg; it looks like an Avenue sheet'
    >>> refusal("no Avenue sheet found in X.jpg", "avenue", None)
    'no Avenue sheet found in X.jpg'
    """
    if found is None or found == game:
        return message
    return f"{message}; it looks like {BOARD_NAMES[found]}"


def none_found(source: str) -> str:
    """The message when no reader finds its board in the photo: every game named.

    >>> none_found("X.jpg")
    'no Agricola farmyard, Avenue sheet or Carcassonne layout found in X.jpg (give --game to read it as one game)'
    """
    return f"no Agricola farmyard, Avenue sheet or Carcassonne layout found in {source} (give --game to read it as one game)"
