import pytest

from chat.candidates import Candidate
from chat.rse import PRESETS
from chat.segments import RankedQuery, extract_segments
from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db

PIECES = [f"Paragraph {i:02d} of the guide, about topic {i:02d}. " for i in range(60)]  # all one length


def _candidate(chunk: Chunk, *, vector_rank=None, keyword_rank=None) -> Candidate:
    document = chunk.document
    return Candidate(chunk_id=chunk.id, document_id=document.id, collection_id=document.collection_id,
                     chunk_index=chunk.chunk_index, text=chunk.text, start=chunk.start, end=chunk.end, page=chunk.page,
                     title=document.title, source=document.source, vector_rank=vector_rank,
                     keyword_rank=keyword_rank, similarity=None, bm25=None, keyword_score=None)


@pytest.fixture
def guide():
    collection = make_collection("guides")
    return collection, make_document(collection, "guide.md", PIECES)


def _ranked(guide, *, vector_rank_of_answer):
    """Chunk 45 (the answer, relevance 0.9) in 21st place of the fused order, after twenty
    irrelevant chunks."""
    collection, document = guide
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    filler = [_candidate(chunks[i], keyword_rank=i // 2 + 1) for i in range(0, 40, 2)]
    answer = _candidate(chunks[45], vector_rank=vector_rank_of_answer)
    candidates = filler + [answer]
    relevance = {c.chunk_id: 0.0 for c in filler} | {answer.chunk_id: 0.9}
    return collection, document, RankedQuery(candidates, relevance)


def test_a_chunk_one_side_ranks_first_keeps_its_value_though_fusion_ranked_it_low(guide):
    collection, document, ranked = _ranked(guide, vector_rank_of_answer=1)
    segments = extract_segments([ranked], preset=PRESETS["balanced"], eligible_collections={collection.id})
    assert [(s.document_id, s.start, s.end) for s in segments] == [(document.id, 45, 46)]
    assert segments[0].text == PIECES[45]
    # 0.9 x exp(0 / 30) - 0.18 (its value at rank 0 rather than the fused place 20)
    assert segments[0].score == pytest.approx(0.72)


def test_a_chunk_ranked_low_everywhere_decays_by_its_fused_place(guide):
    collection, _, ranked = _ranked(guide, vector_rank_of_answer=30)
    # 0.9 x exp(-20 / 30) - 0.18 = 0.28, under the preset's minimum segment value 0.5
    assert extract_segments([ranked], preset=PRESETS["balanced"], eligible_collections={collection.id}) == []
