"""Making an encoder folder (onnx_runtime.py) from a sentence-transformers model folder.

A BERT model is written as an ONNX graph straight from its safetensors weights (bert_graph.py), with
numpy and onnx alone, so the default install never needs torch. Any other architecture is traced
through torch once, which needs the `models` extra, and checked against sentence-transformers on
probe texts before it is kept. An int8 export quantises the fp32 graph and is checked against it.
Exports are cached, keyed by the model's files, so a machine exports a model once.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import logging
import shutil
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from arag_mcp.indexer.user_cache import cache_root, new_cache_folder

from .bert_graph import INPUTS, is_bert, write_bert_graph
from .onnx_runtime import OnnxEncoder
from .settings import resolve_model_path

EXPORT_VERSION = 2
"""Bumped when the export recipe changes, so cached exports are made again."""

POOLING_FLAGS = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_lasttoken": "lasttoken",
    "pooling_mode_max_tokens": "max",
}
POOLING_MODES = tuple(POOLING_FLAGS.values())
FP32_TOLERANCE = 1e-4
"""Largest element difference from sentence-transformers a traced fp32 export may show."""
INT8_MIN_COSINE = 0.95
"""Smallest cosine to the fp32 vector an int8 export may show on the probes."""
PROBES = (
    "Paris is the capital and largest city of France.",
    "  leading and trailing spaces  ",
    "Émile Zola écrivit « J'accuse » en 1898 — 東京は日本の首都です。",
    "x",
    "A long sentence that runs past the model's window. " * 60,
)


class ExportError(Exception):
    """The model cannot be served through ONNX Runtime; the message says why."""


def export_folder(model_dir: Path, quantized: bool) -> Path:
    """The cache folder of this model's export: keyed by its files, the precision and the exporter."""
    digest = hashlib.sha256(f"{model_dir.resolve()}|{quantized}|{EXPORT_VERSION}".encode())
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"|{path.relative_to(model_dir)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return cache_root() / "onnx" / f"{model_dir.name}-{'int8' if quantized else 'fp32'}-{digest.hexdigest()[:16]}"


def export_encoder(model_dir: Path, quantized: bool, load_model: Callable[[], Any]) -> Path:
    """The encoder folder of the model in `model_dir`, exported into the cache the first time.

    `load_model` gives the SentenceTransformer, and is called only for a model that must be traced.
    Raises ExportError when the model cannot run on ONNX Runtime, OSError when the cache is not writable.
    """
    target = export_folder(model_dir, quantized)
    if (target / "recipe.json").exists():
        return target
    stdout_to_stderr = contextlib.redirect_stdout(sys.stderr)  # stdout may be the MCP stdio channel
    with new_cache_folder(target, "recipe.json") as work, stdout_to_stderr:
        traced = None if is_bert(model_dir) else load_model()
        if traced is None:
            recipe = _file_recipe(model_dir)
            write_bert_graph(model_dir, work / "model.onnx")
            shutil.copyfile(model_dir / "tokenizer.json", work / "tokenizer.json")
        else:
            recipe = _model_recipe(traced)
            _trace(traced, work / "model.onnx", recipe["inputs"])
            traced.tokenizer.backend_tokenizer.save(str(work / "tokenizer.json"))
        (work / "recipe.json").write_text(json.dumps(recipe, indent=2))
        if traced is not None:
            _verify_trace(traced, OnnxEncoder(work))
        if quantized:
            _quantize(work)
    return target


def local_model_dir(model: str) -> Path | None:
    """The model's folder on this machine: a path, the packaged default, or a Hugging Face cache snapshot."""
    path = Path(resolve_model_path(model))
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache (or not a repo name): no export
        return None


def _file_recipe(model_dir: Path) -> dict[str, Any]:
    """The recipe of a sentence-transformers folder, read from its configuration files as
    sentence-transformers reads them (modules, pooling, window, case, prompts)."""

    def read(name: str, default: Any = None) -> Any:
        path = model_dir / name
        if not path.is_file():
            if default is None:
                raise ExportError(f"it has no {name}")
            return default
        return json.loads(path.read_text())

    modules = read("modules.json")
    kinds = [str(module.get("type", "")).rsplit(".", 1)[-1] for module in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
        raise ExportError(f"its modules are {kinds}; ONNX export handles Transformer, Pooling[, Normalize]")
    pooling = read(f"{modules[1].get('path') or '1_Pooling'}/config.json")
    modes = [mode for flag, mode in POOLING_FLAGS.items() if pooling.get(flag)]
    if len(modes) != 1 or pooling.get("pooling_mode_mean_sqrt_len_tokens") or not pooling.get("include_prompt", True):
        raise ExportError(f"its pooling {pooling} is not one of {POOLING_MODES} over all tokens")
    if not (model_dir / "tokenizer.json").is_file():
        raise ExportError("it has no fast tokenizer (tokenizer.json)")
    config = read("config.json")
    transformer = read("sentence_bert_config.json", {})
    tokenizer = read("tokenizer_config.json", {})
    window = transformer.get("max_seq_length") or min(
        int(config.get("max_position_embeddings", 512)), int(tokenizer.get("model_max_length", 512))
    )
    prompts = read("config_sentence_transformers.json", {}).get("prompts") or {}
    return {
        "export_version": EXPORT_VERSION,
        "inputs": INPUTS,
        "pooling": modes[0],
        "max_tokens": int(window),
        "lowercase": bool(transformer.get("do_lower_case", False)),
        "pad_id": _pad_id(model_dir, tokenizer.get("pad_token")),
        "dimension": int(config["hidden_size"]),
        "prompts": {kind: prompts.get(kind, "") or "" for kind in ("query", "document")},
    }


def _pad_id(model_dir: Path, pad_token: Any) -> int:
    from tokenizers import Tokenizer

    token = pad_token.get("content") if isinstance(pad_token, dict) else pad_token
    found = Tokenizer.from_file(str(model_dir / "tokenizer.json")).token_to_id(token) if token else None
    return int(found if found is not None else 0)


def _model_recipe(model) -> dict[str, Any]:  # noqa: ANN001 - a SentenceTransformer
    """What OnnxEncoder must do around the traced transformer, read from the model's own modules."""
    names = [type(module).__name__ for module in model]
    if names[:2] != ["Transformer", "Pooling"] or names[2:] not in ([], ["Normalize"]):
        raise ExportError(f"its modules are {names}; ONNX export handles Transformer, Pooling[, Normalize]")
    transformer, pooling = model[0], model[1].get_config_dict()
    mode = pooling.get("pooling_mode")
    if mode not in POOLING_MODES or not pooling.get("include_prompt", True):
        raise ExportError(f"its pooling {pooling} is not one of {POOLING_MODES} over all tokens")
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None or not getattr(tokenizer, "is_fast", False):
        raise ExportError("it has no fast tokenizer (tokenizer.json)")
    forward = set(inspect.signature(transformer.auto_model.forward).parameters)
    inputs = [name for name in INPUTS if name in forward]
    if inputs[:1] != ["input_ids"]:
        raise ExportError(f"its transformer takes {sorted(forward)}, not input_ids")
    return {
        "export_version": EXPORT_VERSION,
        "inputs": inputs,
        "pooling": mode,
        "max_tokens": int(model.max_seq_length),
        "lowercase": bool(getattr(transformer, "do_lower_case", False)),
        "pad_id": int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0),
        "dimension": int(pooling["embedding_dimension"]),
        "prompts": {kind: model.prompts.get(kind, "") or "" for kind in ("query", "document")},
    }


def _trace(model, path: Path, inputs: list[str]) -> None:  # noqa: ANN001
    import torch

    network = model[0].auto_model.eval()

    class LastHiddenState(torch.nn.Module):
        """Calls the transformer by keyword: positional order differs between architectures."""

        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor | None = None,
            token_type_ids: torch.Tensor | None = None,
        ) -> torch.Tensor:
            given = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
            return self.network(**{name: given[name] for name in inputs}).last_hidden_state

    sample = model.tokenizer(["a b", "a b c d e"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in [*inputs, "last_hidden_state"]}
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about Python branches; _verify_trace checks the result
            torch.onnx.export(
                LastHiddenState().eval(),
                tuple(sample[name] for name in inputs),
                str(path),
                input_names=inputs,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
    except Exception as exc:  # noqa: BLE001 - any tracing failure means "not exportable"
        raise ExportError(f"torch.onnx.export failed ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None


def _verify_trace(model, encoder: OnnxEncoder) -> None:  # noqa: ANN001 - a SentenceTransformer
    """The traced graph against sentence-transformers on the probes, under each of the model's prompts."""
    for prompt in sorted(set(encoder.recipe["prompts"].values())):
        expected = model.encode(list(PROBES), prompt=prompt or None, convert_to_numpy=True, normalize_embeddings=True)
        difference = float(np.max(np.abs(expected - encoder.encode(PROBES, prompt))))
        if difference > FP32_TOLERANCE:
            raise ExportError(f"exported vectors differ from the original by {difference:.2e}")


def _quantize(folder: Path) -> None:
    """Dynamic int8 weights, one scale per output channel (per-tensor scales lose too much here),
    kept only if the probes' vectors stay close to the fp32 graph's."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    expected = OnnxEncoder(folder).encode(PROBES, "")
    path = folder / "model.onnx"
    fp32 = path.with_suffix(".fp32.onnx")
    path.rename(fp32)
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs every tensor, and advice, on the root logger
    try:
        quantize_dynamic(
            str(fp32),
            str(path),
            per_channel=True,
            weight_type=QuantType.QInt8,
            extra_options={"MatMulConstBOnly": True},
        )
    finally:
        root.setLevel(level)
    fp32.unlink()
    cosine = float(np.min(np.sum(expected * OnnxEncoder(folder).encode(PROBES, ""), axis=1)))
    if cosine < INT8_MIN_COSINE:
        raise ExportError(f"int8 vectors reach cosine {cosine:.3f} to the original, below {INT8_MIN_COSINE}")
