"""The Avenue reader, one stage per module (bottom first):

- :mod:`~vision.avenue.rectify`: the photo warped onto the sheet's frame, corrected by its printed grid;
- :mod:`~vision.avenue.locate`: the sheet found in the photo, as four corners;
- :mod:`~vision.avenue.cells`: the cells and the score column cut into pieces;
- :mod:`~vision.avenue.assemble`: the sheet from the pieces read;
- :mod:`~vision.avenue.read`: the reader (:func:`~vision.avenue.read.read_avenue`) and its picture.

Beside the reader, never imported by it: the renderer (:mod:`~vision.avenue.render`), the
foreign proxy (:mod:`~vision.avenue.proxy`, never trained on), the training
(:mod:`~vision.avenue.train`) and the custom sheet templates (:mod:`~vision.avenue.template`,
``scorelens template``).
"""
