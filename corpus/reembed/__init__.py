"""Changing the embedding model: re-embed a collection's chunks with EMBEDDING_MODEL in the
background, keep searching its old vectors meanwhile, and switch when every chunk has a new one.

store: where a model's vectors live (Chunk.embedding for the column's model, which the database records, else
corpus_chunkvector with one partial HNSW index per model). services: start, run (resumable) and
swap. README "Changing the embedding model".
"""
