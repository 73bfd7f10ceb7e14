"""The Agricola reader's parameters, in one place: its models, and one dataclass per stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.agricola import ANIMALS, HOUSES, KINDS


# ---------------------------------------------------------------------------
# Parameters, in one place

@dataclass(frozen=True)
class AgricolaModels:
    """The Agricola reader's models: ``models/NAME.onnx``, or paths."""

    board: str = "agricola-board"      # segmentation: where the farmyard board is
    spaces: str = "agricola-spaces"    # a space: kind, house, stable, animals, crops, people
    fences: str = "agricola-fences"    # a fence edge: none or fence


MODELS = AgricolaModels()


@dataclass(frozen=True)
class FindBoard:
    """Parameters of finding and locking onto the farmyard board."""

    mask_long_side: int = 192        # the segmentation network sees the photo this large
    mask_threshold: float = 0.5      # board probability of a board pixel
    min_area: float = 0.015          # a region covers at least this fraction of the photo
    max_regions: int = 2             # largest regions tried
    second_look_margin: float = 0.12  # a region is looked at again with this much (of its size) around it
    work_px_per_mm: float = 5.0      # the photo is brought down to about this for the lock
    lock_px_per_mm: float = 2.5      # the fence lines are looked for at this scale
    lock_passes: int = 5
    settled_mm: float = 0.2          # a pass moving the board's corners less than this is the last
    search_mm: float = 12.0          # how far a fence line may be from where expected, at first ...
    wider_searches: tuple = (20.0, 30.0)  # ... and, while no lock is sure, these further (kept only if sure)
    near_mm: float = 4.0             # ... and once the first pass has corrected the homography
    outward_mm: float = 2.0          # how far the outer fence lines are looked for outwards
    first_outward_mm: float = 6.0    # ... at the first, far look for other prints (their own margins; the mask stops short)
    max_slope: float = 0.06          # fence lines turned further than this from where expected are not tried
    line_step_mm: float = 0.8        # a fence line is looked at this often along it
    min_crossings: int = 8           # fewer crossings agreeing: the pass is not trusted
    agree_mm: float = 1.5            # crossings this close to the fitted homography agree with it
    slot_mm: float = 6.0             # a fence slot: two parallel edges this far apart (the training art's) ...
    slot_widths_mm: tuple = (3.0, 4.5, 6.0, 8.0)  # ... and the printed paths of other prints, and fence sticks
    lock_colour: bool = True         # where the grey is not sure, the lock looks at colour edges too (brown on green) ...
    colour_weight: float = 2.0       # ... the colour-opposed channels' edges weighted this much against lightness's
    min_read_crossings: int = 12     # a board read agrees with at least this many of the 24 crossings
    outer_check_below: int = 22      # a lock with fewer crossings agreeing has its outer lines checked ...
    min_inner_crossings: int = 6     # ... from the inner lines' crossings (of 8), where this many are found
    # the search's budget, in looks at the fence lines (vision.agricola.locate.Looks: the board rectified
    # where a lock puts it and its 10 lines searched, 10-20 ms of CPU), so that a hard photo costs a bounded,
    # repeatable amount whatever the load; the lock begun when the last look is spent is finished (16 at most)
    short_looks: int = 24            # the lock onto the board model's outlines at first; then the grid of fence
    #                                  lines is looked for (vision.agricola.board, BoardSearch.grid_looks), and only
    #                                  where that finds no sure board does the lock search on, until ...
    max_looks: int = 96              # ... this many looks in all; then the reader says in one line what it missed
    another_looks: int = 8           # the search for another farmyard beside one read (the lock only) ...
    another_min_area: float = 0.4    # ... from regions of the board mask covering at least this share of the one
    #                                  read's area (a farmyard on the same table is seen about as large; the
    #                                  smaller regions were cards and counters: at most 0.30 on the tuning
    #                                  photos and our own art, the neighbouring farmyards 0.65-0.89)
    max_seconds: float = 1.8         # the calibration's own searches (vision.agricola.calibration) stop after this much
    #                                  CPU time too (their report's "deadline")
    camera_check: bool = True        # a lock no camera could see (a grid stretched one way, a corner bent) is refitted:
    camera_focal_35mm: tuple = (18.0, 70.0)  # ... a camera of square pixels, of this focal length (35 mm equivalent) ...
    camera_focal_steps: int = 96     # ... tried at this many focal lengths (a fit, at every eighth), its principal point at the photo's centre or
    #                                  where the board's centre is seen (a photo cropped around the board, or a camera aimed at it)
    camera_tolerance: float = 0.02   # ... a lock off such a camera by more (skew or log aspect of the board's two axes) ...
    camera_mm: float = 1.0           # ... and whose crossings lie further than this from the nearest camera's ...
    camera_slack: int = 2            # ... is replaced by the lock refitted as a camera's if it agrees on at most this many fewer crossings
    min_peak: float = 1.3            # a fence line's response over the median of those near it
    min_score: float = 1.25          # space-edge contrast needed to accept a board
    sure_crossings: int = 20         # a lock agreeing on this many crossings ends the search ...
    lock_area: tuple = (0.7, 1.45)   # ... if the board it gives has this share of its outline's area
    faint_threshold: float = 0.3     # no board found: regions this likely a board are tried too ...
    faint_min_area: float = 0.002    # ... down to this fraction of the photo ...
    grow: tuple = (1.12, 1.25)       # ... with their outlines grown by these factors, after ...
    faint_look_margin: float = 1.5   # ... a second look this much wider (a faint region can be a small part of the board)
    neighbours: bool = True          # a lock that is not sure is tried again a space over, or a row
    neighbour_gain: float = 1.15     # ... or column wider or narrower; kept if it scores this much more
    neighbour_rounds: int = 3        # ... and from there again, at most this many times
    cover_slack: float = 0.02        # ... and if it covers the board mask at most this much less
    cover_gain: float = 0.1          # a neighbour covering the mask this much better needs only to score more


FIND = FindBoard()


@dataclass(frozen=True)
class Cut:
    """Parameters of cutting the rectified board."""

    rect_px_per_mm: float = 3.2      # the rectified board (debug image, review page)
    px_per_mm: float = 1.28          # crops are cut at this scale (the rectified one shrunk)
    space_px: int = 64               # a space crop: from fence line to fence line, 50 mm
    fence_len_px: int = 48           # a fence crop: 37.5 mm along the slot, centred ...
    fence_wide_px: int = 20          # ... and 15.6 mm across it
    # a space's meadow over the margin's, as our print has them (vision.agricola.render's style, BGR):
    # another print's margin (a parchment border, a bright frame) says nothing of its spaces
    space_over_margin: tuple = (0.40 / 0.22, 0.72 / 0.55, 0.58 / 0.42)
    margin_agrees: tuple = (0.6, 1.65)  # the margin's white is kept if the spaces' agrees this well (set on seed 101)


CUT = Cut()


@dataclass(frozen=True)
class Sticks:
    """Parameters of reading fences from the sticks themselves, where the fence model reads
    more fences than a farm can hold (:func:`stick_fences`): the print's paths taken for fences."""

    band: tuple = (6, 14)            # rows of a fence crop (20 across) around the fence line: +-3 mm
    row_percentile: float = 80.0     # along the line, a column differs where most of the band does
    min_difference: float = 12.0     # colour distance (the board's white = 128) a stick differs by, at least ...
    times_typical: float = 2.0       # ... and this many times the typical edge's
    min_cover: float = 0.6           # a fence differs along at least this share of the crop's length
    sharpness: float = 10.0          # the share's distance from min_cover -> a probability


STICKS = Sticks()


@dataclass(frozen=True)
class AssembleFarm:
    """Parameters of assembling a farm from the classifiers' outputs."""

    flag_below: float = 0.70         # confidence under which an element is flagged (measured on seeds 2 and 3:
    #                                  0.9 flags 79% of the boards to catch 41 of 55 wrong elements, 0.7 49% for 39)
    finding_penalty: float = 0.5     # a warning multiplies the confidence of what it names by this
    doubt_below: float = 0.98        # only elements read with less confidence are tried again ...
    near_doubt_below: float = 0.995  # ... or with less than this, where a warning names them or their space
    min_alternative: float = 0.01    # an alternative reading needs at least this probability
    max_tries: int = 8               # the most doubtful elements tried, and at most ...
    max_near_tries: int = 4          # ... this many more of those a warning names (or their edges)
    max_changes: int = 3             # elements changed together, at most
    off_camera_doubt: float = 0.5    # a board locked where no camera sees it so (Found.camera False): every
    #                                  element's confidence is multiplied by this and flagged
    # every farm at the end of a game is legal (the rules): the fences are decoded as the likeliest
    # set that encloses pastures (:func:`vision.agricola.assemble.legal_fences`), and while the farm
    # still breaks a rule, the space reading that brings it nearest to legal is taken (:func:`settle`)
    fenced_kind_weight: float = 1.0  # how much a fenced space's reading as a room or field counts against it
    min_pasture_empty: float = 1e-3  # a space read as empty less likely than this is never fenced
    settle_readings: int = 8         # the readings of each space that settling may choose from
    settle_rounds: int = 15          # spaces changed one after the other, at most
    # the count heads are read as if every count had been equally common in training (where big
    # counts are made common on purpose, :func:`crowded`): their training frequencies divided out
    even_prior_heads: tuple = ("animals", "crops")


ASSEMBLE = AssembleFarm()

#: The space model's heads and their labels, in the order of its outputs.
MAX_ANIMALS_ON_A_SPACE = 12
SPACE_HEADS = {
    "kind": list(KINDS),
    "house": list(HOUSES),
    "stable": ["no", "yes"],
    "animal": ["none"] + list(ANIMALS),
    "animals": [str(n) for n in range(MAX_ANIMALS_ON_A_SPACE + 1)],
    "crop": ["none", "grain", "vegetables"],
    "crops": [str(n) for n in range(4)],
    "people": [str(n) for n in range(6)],
}
FENCE_LABELS = ["none", "fence"]
OFF_BOARD_KEYS = ("supply", "cards", "family_members", "card_points", "bonus_points", "begging_cards")
