"""The reader: a small cross-encoder of our own that reads a question and one candidate (a
sentence under its heading, a term with its definition, a table row with its header) together and
returns how likely the candidate answers the question (0-1).

It runs with onnxruntime from the int8 model committed in reader/model/ (nothing is downloaded);
chat/evaluation/reader_training/ rebuilds it (`make train-reader`). Pure: no Django.
"""
