"""Review: fix a misread on a local web page, and keep the corrections.

``scorelens review PHOTO...`` reads each photo, then serves a page on
127.0.0.1 that shows the rectified board with every reading drawn over it,
the doubtful elements first, and the score card beside it. Each change is
posted to this server, which applies it to the state's JSON form with
:func:`scoring.elements.set_element`, checks and rescores it with the game's
rules module, and answers with the new card. Saving writes

- ``PHOTO.scorelens.json`` next to the photo: the corrected state, the
  reader's state, the corrections (old -> new) and the score; a later
  :func:`vision.read.read_photo` of the same, unchanged photo returns this
  state (:func:`vision.inputs.apply_saved`);
- a crop of every element of the reviewed board, cut from the rectified
  image, into ``CORRECTIONS/GAME/KIND/LABEL/``, the training material of
  ``scorelens learn`` (:mod:`vision.learn`).

Everything the page needs is in ``vision/data/review/`` and served from the
package: no network, no build step.

The page is game-agnostic. What it needs to know about a game is here:
:func:`~vision.review.boxes.element_boxes` (where each element lies on the rectified image;
Carcassonne's follow the layout, :func:`~vision.review.boxes.carcassonne_boxes`),
:func:`~vision.review.editor.editor_specs` (the values an element may take, derived from the
game's JSON schema, with a few per-game editors: Carcassonne's tiles and
meeples are drawn from :func:`~vision.review.editor.tile_pictures`) and :data:`~vision.review.params.OFF_BOARD` (the
values kept off the board, such as Agricola's supply and cards or
Carcassonne's track points, edited beside it). A photo the reader cannot
read is reviewed all the same: its board, or its total, is entered by hand
on a blank board (:func:`~vision.review.session.blank_state`, :class:`~vision.review.boards.EnteredReview` for a store).

Security: the server binds to 127.0.0.1 only, answers only requests whose
Host is this machine, serves only the named photos (by number, never by
path), and accepts a change only as a small JSON body carrying the
session's token, which is embedded in the page. Each body is read to its
declared length with a timeout and checked before it is parsed
(:func:`~vision.review.server.parse_body`); every refusal is a 4xx with a one-line reason.

The modules, bottom first: :mod:`~vision.review.params`, :mod:`~vision.review.boxes`,
:mod:`~vision.review.editor`, :mod:`~vision.review.session` (one photo under review),
:mod:`~vision.review.boards` (opening photos and stores), :mod:`~vision.review.server`
(the web server and ``scorelens review``).
"""
