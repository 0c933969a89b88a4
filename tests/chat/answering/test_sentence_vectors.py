"""The sentence vectors an extractive answer scores come from a store shared by every process: filled
when a document is published, and by answers for what they had to embed. Stored vectors equal
fresh computation; an answer over filled documents embeds only its question; deleting or
re-ingesting a document leaves none of its old rows; another model shares nothing."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from chat.answering import sentence_vectors
from chat.answering.extractive import source_texts
from chat.answering.pipeline import answer_question
from chat.answering.sentence_fill import document_fill, window_texts
from chat.models import SentenceVector
from corpus import services
from corpus.ingest import embed
from corpus.models import Chunk, Collection, Document
from corpus.reembed import services as reembed
from corpus.vectors import column_model
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, eager_media, ingest, long_markdown  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]

# float16 storage: a component of a unit 384-d vector is off by at most about 5e-4 of its size.
TOLERANCE = 2e-3
QUESTION = "How do I get rid of aphids?"
NEW_MODEL = "test-minilm-256-sentences"
DEFAULT_MODEL = f"{embed.PACKAGED_MODEL}@{embed.ONNX}"  # EMBEDDING_MODEL's default


@pytest.fixture
def collection() -> Collection:
    return Collection.objects.create(slug="garden", name="Garden", chunk_size=32, chunk_overlap=0,
                                     embedding_mode=Collection.EmbeddingMode.PLAIN, is_public=True)


def rows_of(document: Document, model: str | None = None) -> dict[bytes, np.ndarray]:
    rows = SentenceVector.objects.filter(document=document, model=model or DEFAULT_MODEL)
    return {bytes(r.digest): sentence_vectors.decode(r.vector) for r in rows}


class Recorder:
    """Wraps embed_texts and remembers every list of texts it was given."""

    def __init__(self, monkeypatch) -> None:
        self.calls: list[list[str]] = []
        real = embed.embed_texts

        def recording(texts, **kwargs):
            self.calls.append(list(texts))
            return real(texts, **kwargs)

        monkeypatch.setattr(embed, "embed_texts", recording)

    @property
    def texts(self) -> list[str]:
        return [text for call in self.calls for text in call]


def test_vectors_stored_at_publishing_equal_fresh_ones(collection, django_capture_on_commit_callbacks):
    document = ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    starts = list(Chunk.objects.filter(document=document).order_by("chunk_index").values_list("start", flat=True))
    texts = window_texts(document.text, starts)
    assert len(texts) > len(starts)  # every sentence, some of them also without their heading
    stored = rows_of(document)
    assert set(stored) == {sentence_vectors.digest(t) for t in texts}
    fresh = embed.embed_texts(texts)
    for text, vector in zip(texts, fresh, strict=True):
        assert np.abs(stored[sentence_vectors.digest(text)] - vector).max() < TOLERANCE
        assert float(stored[sentence_vectors.digest(text)] @ vector) == pytest.approx(1.0, abs=1e-4)


def test_every_source_starting_at_a_chunk_has_its_sentences_filled():
    text = long_markdown(12).decode()
    starts = list(range(0, len(text), 97))  # sources starting mid-paragraph and mid-sentence too
    filled = set(window_texts(text, starts))
    for start in starts:
        source = text[start: start + 600]
        source = source[: source.rfind("\n\n")] if "\n\n" in source else source
        missing = [t for t in source_texts(source) if t not in filled]
        assert not missing, (start, missing)
    # A source starting after its section's heading reads its sentences without one.
    assert any(":" not in t.split(" ", 3)[-1] and t.startswith("On day") for t in filled)
    assert any(t.startswith("Section 3: observations of plot 3: On day") for t in filled)


def test_a_text_without_paragraph_breaks_parses_each_window_to_a_bounded_length(monkeypatch):
    # The hostile "one 5 MB line" (1,563 chunks) made every window run to the end of the text: the fill
    # held both pool processes for over 20 minutes while the documents behind it waited.
    from chat.answering import sentence_fill

    parsed: list[int] = []

    def counting(text):
        parsed.append(len(text))
        return source_texts(text)

    monkeypatch.setattr(sentence_fill, "source_texts", counting)
    text = "Tomatoes need water. " * 20_000  # 420,000 characters, no paragraph break
    window_texts(text, list(range(0, len(text), 3_200)), window=600)
    windows = parsed[1:]  # the first parse is the whole text, once
    assert len(windows) == 132 and max(windows) <= 600 + sentence_fill.MAX_PARAGRAPH_RUN


def test_an_answer_over_filled_documents_embeds_only_its_question(
        collection, django_capture_on_commit_callbacks, no_llm, monkeypatch):
    ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    recorder = Recorder(monkeypatch)
    prepared, answer = answer_question(question=QUESTION, collections=Collection.objects.filter(pk=collection.pk))
    assert "soapy water" in answer.text
    assert len(prepared.quotes.sentences) >= 1
    assert recorder.texts == [QUESTION]  # the search's only: the answer scores with the same vector


def test_answers_store_what_they_embed_for_the_next_one(
        collection, django_capture_on_commit_callbacks, no_llm, monkeypatch, settings):
    settings.ANSWER_VECTORS_AT_INGESTION = False
    document = ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    assert not rows_of(document)
    recorder = Recorder(monkeypatch)
    collections = Collection.objects.filter(pk=collection.pk)
    first = answer_question(question=QUESTION, collections=collections)[1].text
    assert len(recorder.texts) > 1
    assert rows_of(document)  # kept under the document the sentences came from
    recorder.calls.clear()
    assert answer_question(question=QUESTION, collections=collections)[1].text == first
    assert recorder.texts == [QUESTION]  # the search's only: the answer scores with the same vector


def test_the_answer_is_the_same_with_stored_and_fresh_vectors(
        collection, django_capture_on_commit_callbacks, no_llm, settings):
    ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    collections = Collection.objects.filter(pk=collection.pk)
    stored = answer_question(question=QUESTION, collections=collections)[1].text
    SentenceVector.objects.all().delete()
    settings.ANSWER_VECTORS_AT_INGESTION = False
    assert answer_question(question=QUESTION, collections=collections)[1].text == stored


def test_deleting_a_document_or_its_collection_leaves_no_rows(collection, django_capture_on_commit_callbacks):
    guide = ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    peppers = ingest(collection, "peppers.md", GUIDE_V2, django_capture_on_commit_callbacks)
    assert rows_of(guide) and rows_of(peppers)
    services.document_delete(document=guide)
    assert not SentenceVector.objects.filter(document_id=guide.pk).exists()
    assert rows_of(peppers)
    services.collection_delete(collection=collection)
    assert not SentenceVector.objects.exists()


def test_reingesting_replaces_the_documents_rows(collection, django_capture_on_commit_callbacks):
    document = ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    old = set(rows_of(document))
    changed = ingest(collection, "guide.md", GUIDE_V2, django_capture_on_commit_callbacks)
    assert changed.pk == document.pk
    starts = list(Chunk.objects.filter(document=changed).order_by("chunk_index").values_list("start", flat=True))
    wanted = {sentence_vectors.digest(t) for t in window_texts(changed.text, starts)}
    assert set(rows_of(changed)) == wanted
    assert not old & wanted  # nothing of the old text is kept
    assert document_fill(changed.pk) == 0  # filled already: nothing embedded again


class _Truncated:
    """Another model for the test: the packaged model's vectors cut to 256 dimensions, renormalised."""

    def encode(self, texts, **kwargs):
        full = np.asarray(embed.get_model(embed.PACKAGED_MODEL).encode(texts, **kwargs), dtype=np.float32)[:, :256]
        return full / np.linalg.norm(full, axis=1, keepdims=True)


def test_another_model_shares_nothing_and_a_switched_collection_is_refilled(
        collection, django_capture_on_commit_callbacks, settings, monkeypatch):
    document = ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    texts = source_texts(document.text)
    embed.register_model(NEW_MODEL, _Truncated, path=embed.model_path(embed.PACKAGED_MODEL))
    settings.EMBEDDING_MODEL = NEW_MODEL
    assert column_model() == DEFAULT_MODEL
    recorder = Recorder(monkeypatch)
    _, vectors = sentence_vectors.text_vectors(QUESTION, texts, [None] * len(texts))
    assert vectors.shape == (len(texts), 256)  # the new model's, though the old one's are stored
    assert recorder.texts == [QUESTION, *dict.fromkeys(texts)]

    assert reembed.reembed_start(collection=collection) is True
    with django_capture_on_commit_callbacks(execute=True):
        assert reembed.reembed_run(collection.pk) == "done"
    assert not rows_of(document, DEFAULT_MODEL)  # the old model's rows are gone
    new_rows = rows_of(document, NEW_MODEL)
    assert {len(v) for v in new_rows.values()} == {256}
    fresh = embed.embed_texts(texts, model=NEW_MODEL)
    assert np.abs(new_rows[sentence_vectors.digest(texts[0])] - fresh[0]).max() < TOLERANCE


def test_the_fill_command_fills_documents_published_without_it(
        collection, django_capture_on_commit_callbacks, settings):
    settings.ANSWER_VECTORS_AT_INGESTION = False
    document = ingest(collection, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)
    assert not rows_of(document)
    out = io.StringIO()
    call_command("fill_sentence_vectors", "--collection", "garden", stdout=out)
    starts = list(Chunk.objects.filter(document=document).values_list("start", flat=True))
    assert set(rows_of(document)) == {sentence_vectors.digest(t) for t in window_texts(document.text, starts)}
    assert "1/1 documents" in out.getvalue()
    with pytest.raises(CommandError, match="No collection 'nowhere'"):
        call_command("fill_sentence_vectors", "--collection", "nowhere")
