"""Sentence embedding: the model, its ONNX Runtime export, and the settings an embedding run takes."""
