"""The Carcassonne reader, one stage per module (bottom first):

- :mod:`~vision.carcassonne.models`: the reader's models, by their part;
- :mod:`~vision.carcassonne.decode`: the tile labels, equivalent rotations, the joint decoding;
- :mod:`~vision.carcassonne.regions`: where on a tile each of its features lies;
- :mod:`~vision.carcassonne.cut`: one crop per lattice square;
- :mod:`~vision.carcassonne.lattice`: the layout map and the tile lattice in the photo;
- :mod:`~vision.carcassonne.meeples`: the meeples in the meeple maps;
- :mod:`~vision.carcassonne.classify`: the tile and meeple models read the squares;
- :mod:`~vision.carcassonne.calibration`: a user's own tile set (exemplars);
- :mod:`~vision.carcassonne.presence`: tiles told from the table;
- :mod:`~vision.carcassonne.track`: the score track's points, given beside the photo;
- :mod:`~vision.carcassonne.assemble`: the layout from the cells read;
- :mod:`~vision.carcassonne.read`: the reader (:func:`~vision.carcassonne.read.read_carcassonne`),
  its picture and its text.

Beside the reader, never imported by it: the renderer (:mod:`~vision.carcassonne.render`),
the foreign proxy (:mod:`~vision.carcassonne.proxy`, never trained on), the training
(:mod:`~vision.carcassonne.train`) and the calibration command
(:mod:`~vision.carcassonne.calibrate`).
"""
