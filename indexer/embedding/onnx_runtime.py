"""A sentence-transformers model exported to ONNX Runtime: faster CPU embedding without torch at run time.

`export_model` traces the model's transformer once (torch, ~10 s), optionally quantises its weights to
int8, and verifies the result against the sentence-transformers model on probe texts before anything is
kept. The export lives in a local cache folder with the tokenizer and a `recipe.json` (pooling,
normalisation, window, prompts), so `OnnxEncoder` needs only onnxruntime and tokenizers.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

EXPORT_VERSION = 1
"""Bumped when the export recipe changes, so cached exports are made again."""

POOLING_MODES = ("mean", "cls", "lasttoken", "max")
FP32_TOLERANCE = 1e-4
"""Largest element difference from sentence-transformers an fp32 export may show."""
INT8_MIN_COSINE = 0.95
"""Smallest cosine to the sentence-transformers vector an int8 export may show on the probes."""
PROBES = (
    "Paris is the capital and largest city of France.",
    "  leading and trailing spaces  ",
    "Émile Zola écrivit « J'accuse » en 1898 — 東京は日本の首都です。",
    "x",
    "A long sentence that runs past the model's window. " * 60,
)


class ExportError(Exception):
    """The model cannot be served through ONNX Runtime; the message says why."""


def cache_root() -> Path:
    """Where exports are kept: $ARAG_MCP_CACHE, else $XDG_CACHE_HOME/arag-mcp, else ~/.cache/arag-mcp."""
    if os.environ.get("ARAG_MCP_CACHE"):
        return Path(os.environ["ARAG_MCP_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arag-mcp"


def export_folder(model_dir: Path, quantized: bool) -> Path:
    """The cache folder of this model's export: keyed by its files, the precision and the exporter."""
    import onnxruntime

    digest = hashlib.sha256(f"{model_dir.resolve()}|{quantized}|{EXPORT_VERSION}|{onnxruntime.__version__}".encode())
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"|{path.relative_to(model_dir)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return cache_root() / "onnx" / f"{model_dir.name}-{'int8' if quantized else 'fp32'}-{digest.hexdigest()[:16]}"


def export_model(model, target: Path, quantized: bool) -> None:  # noqa: ANN001 - a SentenceTransformer
    """Export the loaded SentenceTransformer `model` into `target`; raises ExportError if unsupported."""
    recipe = _recipe(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout may be the MCP stdio channel
            _trace(model, work / "model.onnx", recipe["inputs"])
            if quantized:
                _quantize(work / "model.onnx")
        model.tokenizer.backend_tokenizer.save(str(work / "tokenizer.json"))
        (work / "recipe.json").write_text(json.dumps(recipe, indent=2))
        _verify(model, OnnxEncoder(work), quantized)
        try:
            work.rename(target)
        except OSError:  # another process finished the same export first
            if not (target / "recipe.json").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _recipe(model) -> dict:  # noqa: ANN001
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
    inputs = [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in forward]
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
            warnings.simplefilter("ignore")  # tracer notes about Python branches; _verify checks the result
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


def _quantize(path: Path) -> None:
    """Dynamic int8 weights, one scale per output channel (per-tensor scales lose too much here)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = path.with_suffix(".fp32.onnx")
    path.rename(fp32)
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.WARNING)  # the quantiser logs every tensor at INFO on the root logger
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


def _verify(model, encoder: OnnxEncoder, quantized: bool) -> None:  # noqa: ANN001
    """Compare with sentence-transformers on the probes, under each of the model's prompts."""
    for prompt in sorted(set(encoder.recipe["prompts"].values())):
        expected = model.encode(list(PROBES), prompt=prompt or None, convert_to_numpy=True, normalize_embeddings=True)
        _compare(expected, encoder.encode(PROBES, prompt), quantized)


def _compare(expected: np.ndarray, actual: np.ndarray, quantized: bool) -> None:
    if quantized:
        cosine = float(np.min(np.sum(expected * actual, axis=1)))
        if cosine < INT8_MIN_COSINE:
            raise ExportError(f"int8 vectors reach cosine {cosine:.3f} to the original, below {INT8_MIN_COSINE}")
    else:
        difference = float(np.max(np.abs(expected - actual)))
        if difference > FP32_TOLERANCE:
            raise ExportError(f"exported vectors differ from the original by {difference:.2e}")


class OnnxEncoder:
    """Tokenise, run the exported transformer, pool and normalise: sentence-transformers' pipeline."""

    def __init__(self, folder: Path, threads: int | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.recipe = json.loads((folder / "recipe.json").read_text())
        self.counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.counter.no_truncation()
        self.counter.no_padding()
        self.batcher = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.batcher.enable_truncation(self.recipe["max_tokens"])
        self.batcher.enable_padding(direction="right", pad_id=self.recipe["pad_id"])
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # Idle threads sleep instead of spinning: a spinning pool holds the cores the server's
        # vector search needs right after a query is embedded (and other processes need meanwhile).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(encoding.ids) for encoding in self.counter.encode_batch(list(texts), add_special_tokens=False)]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [tuple(span) for span in self.counter.encode(text, add_special_tokens=False).offsets]

    def encode(self, texts: Sequence[str], prompt: str, batch_size: int = 32) -> np.ndarray:
        """L2-normalised float32 vectors of `texts`, longest first in batches as sentence-transformers does."""
        prepared = [prompt + text.strip() for text in texts]
        if self.recipe["lowercase"]:
            prepared = [text.lower() for text in prepared]
        vectors = np.empty((len(prepared), self.recipe["dimension"]), dtype=np.float32)
        order = np.argsort([-len(text) for text in prepared], kind="stable")
        for first in range(0, len(order), batch_size):
            rows = order[first : first + batch_size]
            vectors[rows] = self._embed_batch([prepared[row] for row in rows])
        return vectors

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.batcher.encode_batch(texts)
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        feed = {name: np.asarray(columns[name], dtype=np.int64) for name in self.recipe["inputs"]}
        hidden = self.session.run(None, feed)[0]
        mask = np.asarray(columns["attention_mask"], dtype=np.float32)[..., None]
        pooled = _pool(self.recipe["pooling"], hidden, mask)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def _pool(mode: str, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    if mode == "mean":
        return (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    if mode == "cls":
        return hidden[:, 0].copy()
    if mode == "lasttoken":
        last = mask[..., 0].sum(axis=1).astype(np.int64) - 1
        return hidden[np.arange(len(hidden)), last].copy()
    return np.where(mask > 0, hidden, -1e9).max(axis=1)
