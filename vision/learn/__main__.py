"""``python -m vision.learn measure``: see :func:`vision.learn.measure`."""

from vision.learn import _main

raise SystemExit(_main())
