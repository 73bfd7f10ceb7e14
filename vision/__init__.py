"""scorelens vision: photo in, board state out.

One stage per module, numpy arrays in and out; the command line is
:mod:`vision.cli`.
"""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """A problem with the user's input (a file, a photo, an option), reported as
    one line ``SOURCE: problem`` without a traceback, exit status 2.

    >>> str(UserError("IMG_1.jpg", "not an image"))
    'IMG_1.jpg: not an image'
    """

    def __init__(self, source: str | Path | None, problem: str):
        self.source = str(source) if source is not None else None
        self.problem = problem
        super().__init__(f"{self.source}: {problem}" if self.source else problem)

    @classmethod
    def naming(cls, source: str | Path, problem: str) -> "UserError":
        """A problem whose text already names ``source`` ("no Avenue sheet found in X.jpg"):
        printed as it is, with ``source`` still kept for whoever handles it.

        >>> e = UserError.naming("X.jpg", "no Avenue sheet found in X.jpg")
        >>> str(e), e.source
        ('no Avenue sheet found in X.jpg', 'X.jpg')
        """
        error = cls(None, problem)
        error.source = str(source)
        return error
