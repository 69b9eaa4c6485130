"""Candidates for exact nearest-vector search from int8 codes, provably complete.

A float32 matrix-vector product is bound by memory bandwidth: it reads 4 bytes per component.
Int8 codes read one, and ONNX Runtime (already the embedding runtime) multiplies them with its
integer kernels, 2-4x faster than NumPy's float32 product over the same rows. The codes only
preselect: every code carries a bound on its error, so the rows whose approximate score is within
twice that bound of the k-th best approximate score hold the exact top k, which the caller then
scores in float32.
"""

from __future__ import annotations

import math

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

LEVELS = 127
ZERO_POINT = 128
"""The query is fed as uint8 with this zero point: its codes span -127..127 like the rows'."""
IR_VERSION = 8
"""An ONNX IR version every supported onnxruntime reads (opset 13's)."""
BLOCK_ROWS = 8_192
"""Rows quantised at a time: the float64 working copies stay a few MB whatever the matrix."""
ROUNDING_SLACK = 1e-5
"""Added to the error bound for float32 rounding in the scale products (scores are at most 1)."""


class QuantisedScorer:
    """Int8 codes of a matrix's rows (one scale per row) and the ONNX Runtime session that scores them."""

    def __init__(self, vectors: np.ndarray) -> None:
        rows, dimension = vectors.shape
        codes = np.empty((dimension, rows), dtype=np.int8)
        """Stored transposed: the layout the integer product takes its right operand in."""
        self.scales = np.empty(rows, dtype=np.float32)
        self.max_code_error = 0.0
        """The largest distance of a row from its decoded codes."""
        self.max_norm = 0.0
        for first in range(0, rows, BLOCK_ROWS):
            block = vectors[first : first + BLOCK_ROWS].astype(np.float64)
            scales = np.abs(block).max(axis=1) / LEVELS
            scales[scales == 0] = 1.0
            quantised = np.rint(block / scales[:, None])
            codes[:, first : first + BLOCK_ROWS] = quantised.T
            self.scales[first : first + BLOCK_ROWS] = scales
            residual = np.linalg.norm(block - quantised * scales[:, None], axis=1)
            self.max_code_error = max(self.max_code_error, float(residual.max(initial=0.0)))
            self.max_norm = max(self.max_norm, float(np.linalg.norm(block, axis=1).max(initial=0.0)))
        self.rows = rows
        model = _integer_product(codes, dimension)
        del codes  # the session holds its own (packed) copy
        self._session = _session(model)
        self._zero_point = np.array(ZERO_POINT, dtype=np.uint8)

    def candidates(self, query: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> np.ndarray:
        """Row numbers, in no order, among which are the `limit` rows with the highest exact dot
        product with `query` (every row that ties with the last of them too); with `allowed` (a
        mask over rows holding at least `limit` rows), the same among the allowed rows only."""
        scale = float(np.abs(query).max()) / LEVELS or 1.0
        codes = np.rint(query * np.float32(1.0 / scale))
        residual = query - codes * np.float32(scale)
        query_error = math.sqrt(float(residual @ residual))
        code_norm = math.sqrt(float(codes @ codes))
        products = self._session.run(
            None, {"query": (codes + ZERO_POINT).astype(np.uint8)[None, :], "zero": self._zero_point}
        )
        # Scores divided by the query's scale: one pass over the rows.
        approximate = np.multiply(products[0][0], self.scales, dtype=np.float32)
        # |exact - approximate| <= |(q - q')·s| + |q'·(s - s')| <= |q - q'| |s| + |q'| |s - s'|
        bound = query_error * self.max_norm + code_norm * scale * self.max_code_error + ROUNDING_SLACK
        if allowed is not None:
            approximate[~allowed] = -np.inf
        kth = np.partition(approximate, self.rows - limit)[self.rows - limit]
        # At least `limit` rows score >= kth - bound exactly, so each of the top `limit` does too,
        # and its approximate score is at least kth - 2 * bound.
        return np.flatnonzero(approximate >= kth - 2 * bound / scale)


def _integer_product(codes: np.ndarray, dimension: int) -> bytes:
    """A model computing query (1 x dimension, uint8) times `codes` (dimension x rows, int8) in int32."""
    rows = codes.shape[1]
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["query", "codes", "zero"], ["products"])],
        "quantised_scores",
        [
            helper.make_tensor_value_info("query", TensorProto.UINT8, [1, dimension]),
            helper.make_tensor_value_info("zero", TensorProto.UINT8, []),
        ],
        [helper.make_tensor_value_info("products", TensorProto.INT32, [1, rows])],
        [numpy_helper.from_array(codes, "codes")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    return model.SerializeToString()


def _session(model: bytes) -> ort.InferenceSession:
    """The model's session; its threads sleep between queries rather than spin, which would take a
    core from the server's other work (and from other processes) after every search."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
