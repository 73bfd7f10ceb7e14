"""Batch mode: a folder of photos in, a results store out, standings from it.

``scorelens batch PATH... --game G --db results.sqlite`` reads every photo
with the game's reader, in worker processes, and stores each one in the
results store (:mod:`vision.store`) as soon as it is read. ``scorelens
export`` turns the store into a table of photos and a table of standings.

Which photos
------------
Each PATH is a photo or a folder; folders are walked, sub-folders included,
for the suffixes in :data:`~vision.batch.photos.PHOTO_SUFFIXES` (any case; hidden files are
skipped). OpenCV here has no HEIF decoder, so ``.heic`` / ``.heif`` photos
are stored as errors that say so, instead of being passed over in silence.
A photo is known by the SHA-256 of its bytes: a photo already in the store is
skipped, so running the same command again resumes an interrupted batch, and
two copies of one photo are read once.

Whose board
-----------
A manifest CSV (``--manifest FILE``) with the header ``photo,player,table,round``
says whose board each photo shows; ``photo`` is a path relative to the
manifest's folder, or a bare file name. Without a manifest, or for a photo it
does not list, the file name says it (:data:`~vision.batch.photos.NAME_PATTERN`):

>>> from vision.batch.photos import names_from_filename
>>> names_from_filename("photos/T03_R2_Alice.jpg")
('Alice', 3, 2)
>>> names_from_filename("R1-Bob Smith.png")
('Bob Smith', None, 1)
>>> names_from_filename("IMG_0042.jpg")
('IMG_0042', None, None)

Off-board values
----------------
A side file ``NAME.side.json`` next to ``NAME.jpg`` holds the values that are
not on the board (for Agricola, say, the cards and supply), as one JSON
object. It is passed to the reader as ``side=`` when the reader takes that
keyword (:func:`~vision.batch.worker.takes_side`); it is stored with the photo either way.

Workers
-------
An executor reads photos: ``submit(photo)`` returns a
:class:`concurrent.futures.Future` of an :class:`~vision.batch.worker.Outcome`. :class:`~vision.batch.worker.InlineExecutor`
reads in this process (``--workers 1``), :class:`~vision.batch.worker.LocalExecutor` in a pool of
worker processes, :class:`~vision.batch.worker.DaskExecutor` on a ``dask.distributed`` cluster
(the ``[cluster]`` extra). Workers only read; this process alone writes the
store, each photo in one transaction, so a crash loses nothing committed.

The modules: :mod:`~vision.batch.photos` (the parameters, the photos and whose they are),
:mod:`~vision.batch.worker` (reading one photo; the executors), :mod:`~vision.batch.run`
(the batch), :mod:`~vision.batch.export` (the photos' table and the standings).
"""
