"""``python -m vision.learn measure``: see :func:`vision.learn.measure`."""

from vision.learn import _main

if __name__ == "__main__":
    raise SystemExit(_main())
