"""Stage 4: run a small ONNX image classifier on a batch of pieces.

A model file carries its own description in the ONNX metadata (written by
:mod:`vision.train`): its ``labels`` (a JSON list) and its input ``size``.
:func:`classifier` loads a model once per process; :meth:`Classifier.predict`
reads a whole ``(N, H, W)`` uint8 batch in one call and returns the softmax
probabilities, from which :class:`Prediction` gives the best and second-best
label of each piece with their confidences.

The same :func:`normalise` is used by training and reading: each piece is
scaled by its own paper brightness, so that ink is positive and paper is
zero whatever the light.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np


def _models_dir() -> Path:
    """Where the shipped models are: the package data ``vision/models`` of an
    installed scorelens (``pip install``, ``pip install --user``, a wheel; see
    ``[tool.setuptools]`` in ``pyproject.toml``), found with importlib.resources,
    else ``models/`` at the top of a checkout (and of ``pip install -e``)."""
    packaged = resources.files("vision").joinpath("models")
    if packaged.is_dir() and any(p.name.endswith(".onnx") for p in packaged.iterdir()):
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "models"


MODELS_DIR = _models_dir()


@dataclass(frozen=True)
class Runtime:
    """onnxruntime settings: tiny models, small batches; one thread is fastest."""

    threads: int = 1


RUNTIME = Runtime()


def normalise(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W)`` uint8 grey pieces -> ``(N, 1, H, W)`` float32, ink positive, paper 0.

    Each piece is divided by its paper brightness (its 90th percentile), so a
    dim photo and a bright one give the same numbers.

    >>> piece = np.full((1, 4, 4), 200, np.uint8); piece[0, 1, 1] = 50
    >>> x = normalise(piece)
    >>> float(x[0, 0, 1, 1].round(2)), float(x[0, 0, 0, 0].round(2))
    (0.75, 0.0)
    """
    x = batch.astype(np.float32)
    paper = np.percentile(x.reshape(len(x), -1), 90, axis=1).reshape(-1, 1, 1) + 1.0
    x = 1.0 - x / paper
    return x[:, None]


@dataclass(frozen=True)
class Prediction:
    """Classifier output for a batch: probabilities and the labels they are for."""

    probs: np.ndarray            # (N, K) softmax probabilities
    labels: tuple[str, ...]

    @property
    def best(self) -> list[str]:
        return [self.labels[i] for i in self.probs.argmax(axis=1)]

    @property
    def confidence(self) -> np.ndarray:
        return self.probs.max(axis=1)

    def top(self, i: int, k: int = 2) -> list[tuple[str, float]]:
        """The ``k`` most likely labels of piece ``i``, with their probabilities."""
        order = np.argsort(self.probs[i])[::-1][:k]
        return [(self.labels[j], float(self.probs[i, j])) for j in order]

    def top2(self, i: int) -> list[tuple[str, float]]:
        return self.top(i, 2)

    def reweighted(self, weights: dict[str, float]) -> "Prediction":
        """The same prediction under another prior: each label's probability times its
        weight (1 where not given), renormalised.

        >>> p = Prediction(np.array([[0.6, 0.4]]), ("6", "0"))
        >>> p.reweighted({"0": 3.0}).best
        ['0']
        """
        w = np.array([weights.get(label, 1.0) for label in self.labels])
        p = self.probs * w
        return Prediction(p / p.sum(axis=1, keepdims=True), self.labels)

    def surer(self, other: "Prediction") -> "Prediction":
        """Per piece, whichever of two looks at it (same labels) is the surer.

        >>> a = Prediction(np.array([[0.6, 0.4], [0.9, 0.1]]), ("none", "NS"))
        >>> b = Prediction(np.array([[0.2, 0.8], [0.7, 0.3]]), ("none", "NS"))
        >>> a.surer(b).best
        ['NS', 'none']
        """
        pick = (other.confidence > self.confidence)[:, None]
        return Prediction(np.where(pick, other.probs, self.probs), self.labels)

    def restricted(self, allowed: list[str]) -> "Prediction":
        """The same prediction over a subset of the labels, renormalised."""
        idx = [self.labels.index(a) for a in allowed]
        p = self.probs[:, idx]
        return Prediction(p / p.sum(axis=1, keepdims=True), tuple(allowed))


class Classifier:
    """An ONNX classifier of grey square pieces."""

    def __init__(self, path: str | Path, runtime: Runtime = RUNTIME):
        import onnxruntime as ort

        self.path = Path(path)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = runtime.threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        meta = self.session.get_modelmeta().custom_metadata_map
        self.labels = tuple(json.loads(meta.get("labels", "[]")))
        self.size = int(meta.get("size", 0))
        self.heads = json.loads(meta["heads"]) if "heads" in meta else None   # head -> labels, several outputs
        self.input = self.session.get_inputs()[0].name

    def run(self, x: np.ndarray) -> np.ndarray:
        """The model's raw output for an input already prepared (a colour model's, a mask's)."""
        return self.session.run(None, {self.input: np.ascontiguousarray(x, np.float32)})[0]

    def predict_heads(self, x: np.ndarray) -> dict[str, Prediction]:
        """For a model with several heads (``heads`` in its metadata, their logits side by side):
        each head's prediction, for an input already prepared."""
        logits, out, i = self.run(x), {}, 0
        for head, labels in self.heads.items():
            out[head] = Prediction(softmax(logits[:, i:i + len(labels)]), tuple(labels))
            i += len(labels)
        return out

    def predict(self, batch: np.ndarray) -> Prediction:
        """Classify ``(N, size, size)`` uint8 grey pieces."""
        if batch.shape[1:] != (self.size, self.size):
            raise ValueError(f"{self.path.name} reads {self.size}x{self.size} pieces, not "
                             f"{batch.shape[1]}x{batch.shape[2]}")
        logits = self.session.run(None, {self.input: normalise(batch)})[0]
        return Prediction(softmax(logits), self.labels)


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@lru_cache(maxsize=None)
def classifier(name_or_path: str) -> Classifier:
    """The classifier ``models/NAME.onnx`` (or at a path), loaded once per process.

    A model adapted to this game set by ``scorelens learn`` is preferred to the
    shipped one (:func:`vision.inputs.adapted_model`).
    """
    path = Path(name_or_path)
    if path.suffix != ".onnx":
        from vision.inputs import adapted_model

        path = MODELS_DIR / f"{name_or_path}.onnx"
        path = adapted_model(name_or_path, path) or path
    return Classifier(path)
