"""A BERT encoder's ONNX graph written from its safetensors weights, without torch.

The graph is the transformer of `transformers.BertModel` in inference (absolute positions, GELU with
erf, post-layer-norm residuals), returning `last_hidden_state`; pooling and normalisation happen in
`OnnxEncoder` as for any export. Writing it takes numpy, safetensors and onnx only, so the default
install embeds with ONNX Runtime and never needs torch.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
OPSET = 17
"""LayerNormalization's first opset."""
EXTERNAL_DATA_BYTES = 1_800_000_000
"""Weights above this go beside the graph: a protobuf message cannot pass 2 GB."""


def is_bert(model_dir: Path) -> bool:
    """Whether `model_dir` holds a BERT encoder this module can write: its config and safetensors weights."""
    try:
        config = json.loads((model_dir / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and (model_dir / "model.safetensors").is_file()
    )


def write_bert_graph(model_dir: Path, path: Path) -> None:
    """Write the ONNX graph of the BERT encoder in `model_dir` to `path`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text())
    weights = load_file(str(model_dir / "model.safetensors"))
    prefix = "bert." if any(name.startswith("bert.") for name in weights) else ""
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    epsilon = float(config.get("layer_norm_eps", 1e-12))
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(name: str, transpose: bool = False) -> str:
        value = weights[prefix + name].astype(np.float32)
        return constant(name, value.T if transpose else value)

    def node(op: str, inputs: list[str], output: str, **attributes: object) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def linear(x: str, name: str, output: str) -> str:
        product = node("MatMul", [x, weight(f"{name}.weight", transpose=True)], f"{output}.matmul")
        return node("Add", [product, weight(f"{name}.bias")], output)

    def layer_norm(x: str, name: str, output: str) -> str:
        gamma, beta = weight(f"{name}.weight"), weight(f"{name}.bias")
        return node("LayerNormalization", [x, gamma, beta], output, axis=-1, epsilon=epsilon)

    def split_heads(x: str, output: str, permutation: list[int]) -> str:
        shaped = node("Reshape", [x, "heads_shape"], f"{output}.reshape")
        return node("Transpose", [shaped], output, perm=permutation)

    constant("heads_shape", np.array([0, 0, heads, hidden // heads], dtype=np.int64))
    constant("hidden_shape", np.array([0, 0, hidden], dtype=np.int64))
    constant("one_float", np.array(1.0, dtype=np.float32))
    constant("mask_floor", np.array(np.finfo(np.float32).min, dtype=np.float32))
    constant("scale", np.array(1.0 / math.sqrt(hidden // heads), dtype=np.float32))
    constant("half", np.array(0.5, dtype=np.float32))
    constant("inverse_sqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))
    constant("zero", np.array([0], dtype=np.int64))
    constant("mask_axes", np.array([1, 2], dtype=np.int64))

    # Embeddings: words + absolute positions + token types, then layer norm.
    words = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "embeddings.words")
    length = node("Shape", ["input_ids"], "input_length", start=1, end=2)
    table = weight("embeddings.position_embeddings.weight")
    placed = node("Slice", [table, "zero", length, "zero"], "embeddings.positions")
    types = node("Gather", [weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], "embeddings.types")
    summed = node("Add", [node("Add", [words, placed], "embeddings.placed"), types], "embeddings.sum")
    x = layer_norm(summed, "embeddings.LayerNorm", "embeddings.out")

    # Padding masked as transformers does: the float32 minimum added to the scores of padding tokens.
    mask = node("Cast", ["attention_mask"], "mask.float", to=TensorProto.FLOAT)
    inverted = node("Sub", ["one_float", mask], "mask.inverted")
    bias = node("Unsqueeze", [node("Mul", [inverted, "mask_floor"], "mask.scaled"), "mask_axes"], "mask.bias")

    for index in range(int(config["num_hidden_layers"])):
        at = f"encoder.layer.{index}"
        query = split_heads(linear(x, f"{at}.attention.self.query", f"{at}.q"), f"{at}.q.heads", [0, 2, 1, 3])
        key = split_heads(linear(x, f"{at}.attention.self.key", f"{at}.k"), f"{at}.k.heads", [0, 2, 3, 1])
        value = split_heads(linear(x, f"{at}.attention.self.value", f"{at}.v"), f"{at}.v.heads", [0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [query, key], f"{at}.scores.raw"), "scale"], f"{at}.scores.scaled")
        probabilities = node("Softmax", [node("Add", [scores, bias], f"{at}.scores")], f"{at}.probs", axis=-1)
        context = node("MatMul", [probabilities, value], f"{at}.context.heads")
        merged = node("Transpose", [context], f"{at}.context.moved", perm=[0, 2, 1, 3])
        context = node("Reshape", [merged, "hidden_shape"], f"{at}.context")
        attended = linear(context, f"{at}.attention.output.dense", f"{at}.attention.dense")
        x = layer_norm(
            node("Add", [attended, x], f"{at}.attention.residual"),
            f"{at}.attention.output.LayerNorm",
            f"{at}.attention.out",
        )
        inner = linear(x, f"{at}.intermediate.dense", f"{at}.intermediate")
        erf = node("Erf", [node("Mul", [inner, "inverse_sqrt2"], f"{at}.gelu.scaled")], f"{at}.gelu.erf")
        gate = node("Mul", [node("Add", [erf, "one_float"], f"{at}.gelu.gate"), "half"], f"{at}.gelu.half")
        activated = node("Mul", [inner, gate], f"{at}.gelu")
        projected = linear(activated, f"{at}.output.dense", f"{at}.output.dense")
        x = layer_norm(node("Add", [projected, x], f"{at}.output.residual"), f"{at}.output.LayerNorm", f"{at}.out")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))

    axes = ["batch", "tokens"]
    graph = helper.make_graph(
        nodes,
        "bert",
        [helper.make_tensor_value_info(name, TensorProto.INT64, axes) for name in INPUTS],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*axes, hidden])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="arag-mcp")
    external = sum(tensor.nbytes for tensor in weights.values()) > EXTERNAL_DATA_BYTES
    onnx.save(model, str(path), save_as_external_data=external, location=f"{path.name}.data" if external else None)
