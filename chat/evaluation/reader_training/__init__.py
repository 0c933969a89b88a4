"""Rebuilding the reader: training pairs made by rules from permissively licensed documentation
that pip installs (docstrings, see corpus.PACKAGES) and from synthetic tables, then fine-tuning the
packaged MiniLM as a cross-encoder on the CPU and exporting it to ONNX (int8). Never imported by
the app. `python -m chat.evaluation.reader_training --help`.
"""
