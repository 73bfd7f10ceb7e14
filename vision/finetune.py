"""Fine-tuning from a shipped model: its exported weights back into a torch network (training only).

:func:`vision.agricola.train.export` and :func:`vision.avenue.train.export_onnx` write a network in
eval mode, so the exporter folds each batch norm into the convolution before it, and the file holds
no batch-norm statistics. A network of the same shape takes the folded weights back: each
convolution gets its folded kernel, and each batch norm then passes its input on with the folded
bias (mean 0, variance ``1 - eps``, scale 1). Fine-tune it with those statistics kept (the batch
norms in eval mode): on batch statistics the network would no longer be its start.

Checked by hand against onnxruntime: the shipped ``agricola-spaces`` and ``avenue-column`` models put
back into their networks give the same outputs to within 1e-5.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def load_onnx_weights(net, path: str | Path) -> None:
    """Put the weights of the exported model ``path`` into ``net`` (a torch module of the same
    shape: its convolutions each followed by a batch norm, in the file's order, and one linear
    layer at the end), in place."""
    import onnx
    import torch
    import torch.nn as nn
    from onnx import numpy_helper

    model = onnx.load(str(path))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:          # equal tensors (biases of zeros, say) the exporter stored once
        if node.op_type == "Identity" and node.input[0] in init:
            init[node.output[0]] = init[node.input[0]]
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    layers = [m for m in net.modules() if isinstance(m, (nn.Conv2d, nn.BatchNorm2d, nn.Linear))]
    pairs = [(a, b) for a, b in zip(layers, layers[1:]) if isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d)]
    linear = next(m for m in layers if isinstance(m, nn.Linear))
    if len(pairs) != len(convs):
        raise ValueError(f"{path}: {len(convs)} convolutions, the network has {len(pairs)}")
    with torch.no_grad():
        for (conv, norm), node in zip(pairs, convs):
            conv.weight.copy_(torch.from_numpy(np.array(init[node.input[1]])))
            norm.weight.fill_(1.0)
            norm.bias.copy_(torch.from_numpy(np.array(init[node.input[2]])))
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
        linear.weight.copy_(torch.from_numpy(np.array(init[gemm.input[1]])))
        linear.bias.copy_(torch.from_numpy(np.array(init[gemm.input[2]])))


def hold_norms(net) -> None:
    """Put ``net``'s batch norms back in eval mode (call it after ``net.train()``, each epoch): a
    network fine-tuned from :func:`load_onnx_weights` keeps the statistics folded into its start,
    where a batch's own would undo what it had learnt."""
    import torch.nn as nn

    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
