"""Learn from corrections: adapt the classifiers to one game set's crops.

The review page keeps a crop of every element of each saved board, filed by
its true label (:func:`vision.review.session.store_crops`); for Agricola and
Carcassonne it also keeps the crops exactly as their models read them, with
each head's true label (:mod:`vision.learn.examples`). ``scorelens learn``
refits the **last layer** of each classifier on those crops: the model's
penultimate-layer features of each crop are computed with onnxruntime, and
a softmax layer is fitted to them, started from the shipped weights and held
near them (:attr:`Learn.l2`), so that labels the corrections never show
keep their shipped behaviour. The refitted weights are written into a copy
of the shipped model, ``SCORELENS_HOME/models/NAME.onnx``, which
:func:`vision.classify.classifier` then prefers to the shipped one
(:func:`vision.inputs.adapted_model`); ``scorelens learn --reset`` removes it.

Reading needs nothing new: the adapted model is an ordinary ONNX file.
Learning needs numpy, onnxruntime and the ``onnx`` package (to read and
write the model's layers), not torch.

Each adapted model has a side file ``NAME.learn.json`` naming the shipped
model it was made from (its SHA-256): after an upgrade ships a new model,
the stale adaptation is ignored until ``learn`` is run again.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from vision import UserError
from vision.inputs import corrections_dir, file_sha256, models_dir


@dataclass(frozen=True)
class Learn:
    """Parameters of learning from corrections."""

    l2: float = 0.01             # pull of the shipped weights (per crop, on the squared difference)
    steps: int = 400             # full-batch Adam steps
    rate: float = 0.01           # Adam step size
    min_crops: int = 10          # fewer crops for a model: leave it as shipped
    fixed_weight: float = 4.0    # Agricola, Carcassonne: a crop the review corrected counts this many times


LEARN = Learn()

#: What each kind of crop teaches, per game: the model (``models/NAME.onnx``)
#: and how a label of the corrections folder is named among the model's labels.
MODELS = {
    "avenue": {
        "cell": ("avenue-cells", {"none": "none"}),
        "round-farm": ("avenue-column", {"none": "blank"}),
        "round-score": ("avenue-column", {"none": "blank"}),
    },
}


#: The models adapted from the model crops a review keeps (:mod:`vision.learn.examples`), per game.
MODEL_CROPS = {
    "agricola": ("agricola-spaces", "agricola-fences"),
    "carcassonne": ("carcassonne-tiles",),
}


def adapted_names(game: str) -> list[str]:
    """The models ``learn`` adapts for ``game``.

    >>> adapted_names("avenue"), adapted_names("carcassonne")
    (['avenue-cells', 'avenue-column'], ['carcassonne-tiles'])
    """
    return sorted({model for model, _ in MODELS.get(game, {}).values()} | set(MODEL_CROPS.get(game, ())))


# ---------------------------------------------------------------------------
# The crops and their labels.

def load_crops(root: Path, game: str, size: int, kinds: dict) -> dict[str, tuple[np.ndarray, list[str]]]:
    """The crops under ``root/GAME/KIND/LABEL/``, grey and resized to the model's
    ``size``: model name -> ``(N, size, size)`` uint8 batch and its N labels."""
    import cv2

    out: dict[str, tuple[list, list]] = {}
    for kind, (model, rename) in kinds.items():
        for folder in sorted((root / game / kind).glob("*")):
            if not folder.is_dir():
                continue
            label = rename.get(folder.name, folder.name)
            for png in sorted(folder.glob("*.png")):
                crop = cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)
                if crop is None:
                    continue
                interp = cv2.INTER_AREA if crop.shape[0] > size else cv2.INTER_LINEAR
                pieces, labels = out.setdefault(model, ([], []))
                pieces.append(cv2.resize(crop, (size, size), interpolation=interp))
                labels.append(label)
    return {m: (np.stack(p), l) for m, (p, l) in out.items()}


# ---------------------------------------------------------------------------
# The model's last layer.

def _onnx():
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        raise UserError(None, "scorelens learn needs the onnx package: pip install 'scorelens[learn]'") from None
    return onnx, numpy_helper


@dataclass
class LastLayer:
    """A classifier split at its last layer: ``logits = features @ weight.T + bias``."""

    model: object                # the onnx ModelProto
    features: str                # name of the tensor that feeds the last layer
    weight_name: str
    bias_name: str
    weight: np.ndarray           # (K, D), as used: logits = features @ weight.T
    bias: np.ndarray             # (K,)
    transposed: bool             # the stored initializer is (D, K)


def last_layer(path: Path) -> LastLayer:
    """Find the final linear layer (a Gemm, or MatMul then Add) that makes the model's output."""
    onnx, numpy_helper = _onnx()
    model = onnx.load(str(path))
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    node = producer.get(graph.output[0].name)
    while node is not None and node.op_type in ("Identity", "Flatten", "Reshape") and node.input[0] in producer:
        node = producer[node.input[0]]
    problem = f"cannot adapt {path.name}: its last layer is not a linear layer"
    if node is None:
        raise UserError(path, problem)
    if node.op_type == "Gemm" and len(node.input) == 3 and node.input[1] in inits and node.input[2] in inits:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
            raise UserError(path, problem)
        w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        transposed = not attrs.get("transB", 0)
        return LastLayer(model, node.input[0], node.input[1], node.input[2], w.T if transposed else w,
                         numpy_helper.to_array(inits[node.input[2]]).astype(np.float32), transposed)
    if node.op_type == "Add":
        mm = producer.get(node.input[0])
        bias = node.input[1]
        if mm is not None and mm.op_type == "MatMul" and mm.input[1] in inits and bias in inits:
            w = numpy_helper.to_array(inits[mm.input[1]]).astype(np.float32)      # (D, K)
            return LastLayer(model, mm.input[0], mm.input[1], bias, w.T,
                             numpy_helper.to_array(inits[bias]).astype(np.float32), True)
    raise UserError(path, problem)


def features(layer: LastLayer, batch: np.ndarray, prepared: bool = False) -> np.ndarray:
    """The penultimate-layer features of a ``(N, size, size)`` uint8 grey batch (or, ``prepared``,
    of inputs already as the model reads them): ``(N, D)``."""
    import onnx
    import onnxruntime as ort

    from vision.classify import normalise

    model = onnx.ModelProto()
    model.CopyFrom(layer.model)
    if layer.features not in {o.name for o in model.graph.output}:
        model.graph.output.append(onnx.helper.make_tensor_value_info(layer.features, onnx.TensorProto.FLOAT, None))
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    x = np.ascontiguousarray(batch, np.float32) if prepared else normalise(batch)
    name = session.get_inputs()[0].name
    out = [session.run([layer.features], {name: x[i:i + 256]})[0] for i in range(0, len(x), 256)]
    return np.concatenate(out).reshape(len(x), -1).astype(np.float32)


def refit(feats: np.ndarray, targets: np.ndarray, weight: np.ndarray, bias: np.ndarray,
          params: Learn = LEARN, heads: list[int] | None = None, weights: np.ndarray | None = None,
          offset: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fit a softmax layer to ``feats`` -> ``targets`` (class indices), starting from
    and held near ``weight``, ``bias``: cross-entropy + ``l2`` * squared distance.

    A model with several heads (their logits side by side, ``heads`` their sizes) takes
    ``targets`` ``(N, len(heads))``, :data:`vision.learn.examples.IGNORE` where a crop says
    nothing of a head; the loss is the sum of the heads' mean cross-entropies. ``weights``:
    how much each crop counts (1 each by default). ``offset`` ``(K,)``: what the reader adds to
    the logits before it decides (Agricola's even prior), so that the fit is to what it decides.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(200, 4)).astype(np.float32); y = (x[:, 0] > 0).astype(int)
    >>> w, b = refit(x, y, np.zeros((2, 4), np.float32), np.zeros(2, np.float32))
    >>> float(((x @ w.T + b).argmax(1) == y).mean()) > 0.95
    True
    >>> y2 = np.stack([y, np.where(x[:, 1] > 0, 2, -100)], 1)          # a second head, 3 labels, half ignored
    >>> w, b = refit(x, y2, np.zeros((5, 4), np.float32), np.zeros(5, np.float32), heads=[2, 3])
    >>> z = x @ w.T + b; seen = y2[:, 1] >= 0
    >>> float((z[:, :2].argmax(1) == y).mean()) > 0.95, bool((z[seen, 2:].argmax(1) == 2).all())
    (True, True)
    """
    w, b = weight.astype(np.float64).copy(), bias.astype(np.float64).copy()
    w0, b0 = w.copy(), b.copy()
    k = len(bias)
    heads = [k] if heads is None else list(heads)
    targets = np.asarray(targets).reshape(len(feats), len(heads))
    bounds = np.cumsum([0] + heads)
    x = feats.astype(np.float64)
    weights = np.ones(len(x)) if weights is None else np.asarray(weights, np.float64)
    # per head: which rows learn from it, their one-hot targets, each row's share of the head's mean
    rows = []
    for h in range(len(heads)):
        seen = targets[:, h] >= 0
        onehot = np.zeros((len(x), heads[h]))
        onehot[np.flatnonzero(seen), targets[seen, h]] = 1.0
        share = np.where(seen, weights, 0.0)
        rows.append((onehot, share / max(share.sum(), 1e-12)))
    offset = np.zeros(k) if offset is None else np.asarray(offset, np.float64)
    with _one_blas_thread():
        _adam(x, w, b, w0, b0, rows, bounds, offset, params)
    return w.astype(np.float32), b.astype(np.float32)


def _one_blas_thread():
    """BLAS on one thread while refitting (threadpoolctl): these products are small, and on a
    busy 2-core machine OpenBLAS's threads made the refit 50 times slower (1.7 s for 100
    products of 168 x 128 by 128 x 97, against 0.03 s on one thread)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


def _adam(x, w, b, w0, b0, rows, bounds, offset, params: Learn) -> None:
    """Full-batch Adam on :func:`refit`'s loss, updating ``w`` and ``b`` in place."""
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t in range(1, params.steps + 1):
        z = x @ w.T + b + offset
        g = np.zeros_like(z)
        for h, (onehot, share) in enumerate(rows):
            a, c = bounds[h], bounds[h + 1]
            zh = np.maximum(z[:, a:c] - z[:, a:c].max(axis=1, keepdims=True), -60.0)   # no subnormals (slow)
            p = np.exp(zh)
            p /= p.sum(axis=1, keepdims=True)
            g[:, a:c] = (p - onehot) * share[:, None]
        grads = [g.T @ x + 2 * params.l2 * (w - w0), g.sum(axis=0) + 2 * params.l2 * (b - b0)]
        for i, (param, grad) in enumerate(zip((w, b), grads)):
            m[i] = beta1 * m[i] + (1 - beta1) * grad
            v[i] = beta2 * v[i] + (1 - beta2) * grad ** 2
            param -= params.rate * (m[i] / (1 - beta1 ** t)) / (np.sqrt(v[i] / (1 - beta2 ** t)) + eps)


def head_accuracy(logits: np.ndarray, targets: np.ndarray, heads: list[int]) -> float:
    """The share of (crop, head) pairs learnt from whose label the logits get right.

    >>> head_accuracy(np.array([[2.0, 0, 0, 1]]), np.array([[0, 0]]), [2, 2])
    0.5
    """
    bounds = np.cumsum([0] + list(heads))
    right = total = 0
    for h in range(len(heads)):
        seen = targets[:, h] >= 0
        right += int((logits[seen, bounds[h]:bounds[h + 1]].argmax(1) == targets[seen, h]).sum())
        total += int(seen.sum())
    return right / max(total, 1)


def write_adapted(name: str, shipped: Path, layer: LastLayer, weight: np.ndarray, bias: np.ndarray, out: Path,
                  info: dict) -> dict:
    """Write the refitted last layer into a copy of the shipped model, ``out/NAME.onnx``, and
    ``out/NAME.learn.json`` (``info`` and the shipped model's SHA-256)."""
    _, numpy_helper = _onnx()
    for init in layer.model.graph.initializer:
        if init.name == layer.weight_name:
            init.CopyFrom(numpy_helper.from_array(weight.T.copy() if layer.transposed else weight, init.name))
        elif init.name == layer.bias_name:
            init.CopyFrom(numpy_helper.from_array(bias, init.name))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.onnx"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(layer.model.SerializeToString())
    tmp.replace(path)
    info = {"model": name, "base": str(shipped), "base_sha256": file_sha256(shipped),
            "made": datetime.now(timezone.utc).isoformat(timespec="seconds"), **info}
    (out / f"{name}.learn.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return {**info, "written": str(path)}


def adapt(name: str, shipped: Path, batch: np.ndarray, labels: list[str], out: Path,
          params: Learn = LEARN) -> dict:
    """Refit model ``name`` on ``batch``/``labels`` and write ``out/NAME.onnx`` and
    ``out/NAME.learn.json``; returns what was done."""
    _, numpy_helper = _onnx()
    from vision.classify import Classifier

    shipped_labels = Classifier(shipped).labels
    keep = [i for i, label in enumerate(labels) if label in shipped_labels]
    skipped = len(labels) - len(keep)
    if len(keep) < params.min_crops:
        return {"model": name, "crops": len(keep), "skipped": skipped, "written": None,
                "note": f"fewer than {params.min_crops} crops: left as shipped"}
    batch = batch[keep]
    targets = np.array([shipped_labels.index(labels[i]) for i in keep])
    layer = last_layer(shipped)
    feats = features(layer, batch)
    before = float(((feats @ layer.weight.T + layer.bias).argmax(1) == targets).mean())
    weight, bias = refit(feats, targets, layer.weight, layer.bias, params)
    after = float(((feats @ weight.T + bias).argmax(1) == targets).mean())
    return write_adapted(name, shipped, layer, weight, bias, out, {
        "crops": len(keep), "skipped": skipped,
        "per_label": {label: labels.count(label) for label in sorted(set(labels[i] for i in keep))},
        "fit_before": round(before, 4), "fit_after": round(after, 4),
        "params": {"l2": params.l2, "steps": params.steps, "rate": params.rate}})


def adapt_examples(name: str, shipped: Path, examples, boards: int, out: Path, params: Learn = LEARN) -> dict:
    """Refit model ``name`` (one head or several) on the model crops of
    :func:`vision.learn.examples.load_examples` and write it to ``out``; returns what was done."""
    from vision.classify import Classifier

    model = Classifier(shipped)
    heads = {h: len(labels) for h, labels in model.heads.items()} if model.heads else {"label": len(model.labels)}
    sizes = list(heads.values())
    crops = int(len(examples.x))
    if crops < params.min_crops:
        return {"model": name, "crops": crops, "skipped": 0, "written": None,
                "note": f"fewer than {params.min_crops} crops: left as shipped"}
    if examples.y.shape[1] != len(sizes) or (examples.y.max(0) >= np.array(sizes)).any():
        raise UserError(shipped, f"the crops kept for {name} do not fit this model (was it replaced?); "
                                 f"save the boards on the review page again")
    from vision.learn.examples import reader_offset

    layer = last_layer(shipped)
    feats = features(layer, examples.x, prepared=True)
    weights = np.where(examples.fixed, params.fixed_weight, 1.0)
    offset = reader_offset(name, model)
    before_z = feats @ layer.weight.T + layer.bias + offset
    weight, bias = refit(feats, examples.y, layer.weight, layer.bias, params, heads=sizes, weights=weights,
                         offset=offset)
    after_z = feats @ weight.T + bias + offset
    before, after = head_accuracy(before_z, examples.y, sizes), head_accuracy(after_z, examples.y, sizes)
    fixed = examples.fixed
    fixed_before = head_accuracy(before_z[fixed], examples.y[fixed], sizes)
    fixed_after = head_accuracy(after_z[fixed], examples.y[fixed], sizes)
    return write_adapted(name, shipped, layer, weight, bias, out, {
        "crops": crops, "skipped": 0, "boards": boards, "corrected": int(fixed.sum()),
        "per_label": {h: int((examples.y[:, i] >= 0).sum()) for i, h in enumerate(heads)},
        "fit_before": round(before, 4), "fit_after": round(after, 4),
        "corrected_before": round(fixed_before, 4) if fixed.any() else None,
        "corrected_after": round(fixed_after, 4) if fixed.any() else None,
        "params": {"l2": params.l2, "steps": params.steps, "rate": params.rate, "fixed_weight": params.fixed_weight}})


def learn(game: str, corrections: str | Path | None = None, out: str | Path | None = None,
          params: Learn = LEARN, progress=None) -> list[dict]:
    """Adapt every classifier of ``game`` to the crops in the corrections folder;
    ``progress(done, n)`` is called after each model."""
    from vision.classify import MODELS_DIR, Classifier

    names = adapted_names(game)
    if not names:
        raise UserError(None, f"no classifiers to adapt for {game!r}; learn knows {', '.join(sorted(MODELS))}")
    root = corrections_dir(corrections)
    if not (root / game).is_dir():
        raise UserError(root / game, "no corrections saved for this game yet (save boards on the review page)")
    out = Path(out).expanduser() if out else models_dir()
    reports = []
    for name in names:
        shipped = MODELS_DIR / f"{name}.onnx"
        if name in MODEL_CROPS.get(game, ()):
            from vision.learn.examples import load_examples

            examples, boards = load_examples(root, game, name)
            if examples is not None and not shipped.is_file():
                raise UserError(shipped, "no such model (is scorelens installed whole?)")
            reports.append(adapt_examples(name, shipped, examples, boards, out, params) if examples is not None
                           else {"model": name, "crops": 0, "skipped": 0, "written": None,
                                 "note": "no crops for it: left as shipped (save boards on the review page)"})
        else:
            kinds = {k: v for k, v in MODELS[game].items() if v[0] == name}
            has_crops = any(any((root / game / kind).glob("*/*.png")) for kind in kinds)
            if has_crops and not shipped.is_file():
                raise UserError(shipped, "no such model (is scorelens installed whole?)")
            crops = load_crops(root, game, Classifier(shipped).size, kinds) if has_crops else {}
            if name not in crops:
                reports.append({"model": name, "crops": 0, "skipped": 0, "written": None,
                                "note": "no crops for it: left as shipped"})
            else:
                batch, labels = crops[name]
                reports.append(adapt(name, shipped, batch, labels, out, params))
        if progress:
            progress(len(reports), len(names))
    return reports


def reset(game: str, out: str | Path | None = None) -> list[Path]:
    """Remove the adapted models of ``game``: reading uses the shipped ones again."""
    out = Path(out).expanduser() if out else models_dir()
    removed = []
    for name in adapted_names(game):
        for path in (out / f"{name}.onnx", out / f"{name}.learn.json"):
            if path.exists():
                path.unlink()
                removed.append(path)
    return removed


def cmd_learn(args) -> int:
    """``scorelens learn [--corrections DIR] [--game G] [--out DIR] [--reset]``."""
    if args.reset:
        removed = reset(args.game, args.out)
        print("removed " + ", ".join(str(p) for p in removed) if removed else "no adapted model to remove")
        return 0
    started = time.perf_counter()
    import sys

    from tqdm import tqdm
    with tqdm(desc="learning", unit="model", file=sys.stderr, disable=None) as bar:
        def progress(done, n):
            bar.total = n
            bar.update(done - bar.n)
        results = learn(args.game, args.corrections, args.out, progress=progress)
    for r in results:
        if r["written"]:
            what = (f"{r['crops']} crops of {r['boards']} board{'s' if r['boards'] != 1 else ''}, "
                    f"{r['corrected']} corrected" if "boards" in r
                    else f"{r['crops']} crops ({len(r['per_label'])} labels)")
            print(f"{r['model']}: adapted to {what}, fit {r['fit_before']:.1%} -> {r['fit_after']:.1%}"
                  + (f" (corrected crops {r['corrected_before']:.1%} -> {r['corrected_after']:.1%})"
                     if r.get("corrected_before") is not None else "") + f"; wrote {r['written']}")
        else:
            print(f"{r['model']}: {r['note']}")
        if r["skipped"]:
            print(f"  {r['skipped']} crops skipped: their labels are not among the model's")
    took = f"done in {time.perf_counter() - started:.1f} s; "
    if any(r["written"] for r in results):
        print(took + "scorelens read and batch now use the adapted models")
    else:
        print(took + "nothing adapted: scorelens read and batch use the shipped models")
    return 0


# ---------------------------------------------------------------------------
# Measuring the gain: correct some photos of an unseen art style, learn, read the rest.

def measure(n_corrected: int = 20, n_test: int = 40, seed: int = 8, style: str = "unseen",
            split: str = "test", megapixels=None, workers: int = 2, folder: str | Path | None = None,
            log=print, game: str = "avenue") -> dict:
    """The benchmark before and after learning, on photos the shipped models never saw.

    Renders ``n_corrected + n_test`` photos of ``game`` in the art ``style``
    (into ``folder``, or a temporary one), reads them, corrects the first
    ``n_corrected`` from their truth on a review board and saves them (which
    keeps the crops), runs :func:`learn`, and benchmarks the other ``n_test``
    photos before and after. Everything goes to a temporary
    ``SCORELENS_HOME``: the user's own corrections and models are not touched.
    """
    import os
    import tempfile

    from vision import bench, classify
    from vision.review import session as review_session
    from vision.read import read_photo
    from vision.render import write_set
    from scoring import StateError
    from scoring.elements import elements

    with tempfile.TemporaryDirectory(prefix="scorelens-learn-") as tmp:
        photos = Path(folder) if folder else Path(tmp) / "photos"
        old_home = os.environ.get("SCORELENS_HOME")
        os.environ["SCORELENS_HOME"] = str(Path(tmp) / "home")
        classify.classifier.cache_clear()
        try:
            if not list(photos.glob("*.json")):
                log(f"rendering {n_corrected + n_test} photos, {style} art, {split} handwriting ...")
                write_set(game, n_corrected + n_test, seed, photos, workers=workers, style=style, split=split,
                          **({} if megapixels is None else {"megapixels": megapixels}))
            pairs = bench.load_truths(photos, game)[:n_corrected + n_test]
            corrected, test = pairs[:n_corrected], pairs[n_corrected:]
            fixes, saved = 0, 0
            for photo, truth in corrected:
                try:
                    board = review_session.Review.from_reading(read_photo(photo, game, use_saved=False), photo)
                except UserError as e:
                    log(f"  {e} (not corrected)")
                    continue
                for name, value in elements(truth["state"]).items():
                    if elements(board.data).get(name) != value:
                        try:
                            board.edit(name, value)
                        except (UserError, StateError, ValueError, KeyError):
                            continue      # an edit the page refuses (a Carcassonne tile off the frame)
                        fixes += 1
                board.save()
                saved += 1
            log(f"corrected {saved} of {len(corrected)} photos ({fixes} elements fixed)")
            reader = lambda p, g: read_photo(p, g, use_saved=False)     # noqa: E731
            before = bench.bench_pairs(game, test, reader).summary()
            reports = learn(game)
            classify.classifier.cache_clear()
            after = bench.bench_pairs(game, test, reader).summary()
        finally:
            classify.classifier.cache_clear()
            if old_home is None:
                os.environ.pop("SCORELENS_HOME", None)
            else:
                os.environ["SCORELENS_HOME"] = old_home
    keys = ("element_accuracy", "exact_state_rate", "exact_score_rate", "mean_abs_score_error", "found_rate")
    return {"style": style, "split": split, "seed": seed, "corrected": saved, "test": len(test),
            "elements_fixed": fixes, "learn": reports,
            "before": {k: before[k] for k in keys}, "after": {k: after[k] for k in keys}}


def _main(argv: list[str] | None = None) -> int:
    """``python -m vision.learn measure``: the before/after benchmark as JSON on stdout, progress on stderr."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m vision.learn")
    parser.add_argument("what", choices=("measure",))
    parser.add_argument("--corrected", type=int, default=20)
    parser.add_argument("--test", type=int, default=40)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--style", default="unseen")
    # not carcassonne: its truth and its readings place the layout at different origins, and
    # correcting "tile:X,Y" from the truth needs the bench's alignment first (not done here)
    parser.add_argument("--game", default="avenue", choices=("agricola", "avenue"))
    parser.add_argument("--split", default="test")
    parser.add_argument("--folder", help="keep the rendered photos here (reused when already there)")
    args = parser.parse_args(argv)
    import sys

    result = measure(args.corrected, args.test, args.seed, args.style, args.split, folder=args.folder,
                     log=lambda line: print(line, file=sys.stderr), game=args.game)
    print(json.dumps(result, indent=2))
    return 0

