"""The Agricola reader, one stage per module (bottom first):

- :mod:`~vision.agricola.params`: the reader's parameters, one dataclass per stage;
- :mod:`~vision.agricola.windows`: where the spaces and fence edges are on the board;
- :mod:`~vision.agricola.locate`: the farmyard found and locked to its printed grid;
- :mod:`~vision.agricola.board`: the farmyard found by its grid of fence lines, where the lock is not sure;
- :mod:`~vision.agricola.cut`: the board rectified, its spaces and fence edges cut;
- :mod:`~vision.agricola.assemble`: each space decoded, the farm assembled;
- :mod:`~vision.agricola.offboard`: what the photo cannot show (side file, options);
- :mod:`~vision.agricola.calibration`: reading with the player's own set (a colour table);
- :mod:`~vision.agricola.read`: the reader (:func:`~vision.agricola.read.read_agricola`),
  its picture and its text.

Beside the reader, never imported by it: the renderer (:mod:`~vision.agricola.render`), the
foreign proxy (:mod:`~vision.agricola.proxy`, never trained on), the training
(:mod:`~vision.agricola.train`) and the calibration command (:mod:`~vision.agricola.calibrate`).
"""
