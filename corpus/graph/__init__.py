"""The HNSW graph's tail: chunks are published outside the graph and moved into it in the background.

An HNSW insert was ~72% of the publish step at a million chunks (docs/scaling.md, "Publishing").
The chunk index is partial (WHERE in_graph), so a published chunk (in_graph false) costs no graph
insert; searches scan those chunks exactly and merge them by distance with the graph's
(chat/retrieval/vector.py); merge.py moves them into the graph in small batches, queued after
each publish (receivers.py) and swept by Celery beat. The BM25 postings follow the graph (corpus
0017): a tail chunk has none, and keyword search scores it from its tsvector (chat/retrieval/bm25.py).
"""
