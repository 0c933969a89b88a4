"""Collections, documents and their chunks (text, offsets, context, embedding, keyword index)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from pgvector.django import HnswIndex, VectorField

from corpus.ingest.parse.base import TEXT_VERSION, page_number
from corpus.vectors import CompactVectorField, column_model

# The text search configuration used for the keyword index and for queries alike.
SEARCH_CONFIG = "english"
CHUNK_SIZE_MIN, CHUNK_SIZE_MAX = 16, 2048  # tokens; the check constraint collection_chunk_size_range
# One answer for every slug that cannot be had (another collection's, private or not, or a renamed
# collection's old one): it names no owner and says nothing about what the collection holds.
SLUG_UNAVAILABLE = "This slug is not available; choose another."
# Every HNSW index on chunk vectors (the column's and a re-embed's, corpus/reembed/store.py).
# ef_construction 32 published 1.1-1.2x as fast at a million chunks, but its poorer graph left
# filtered iterative scans short of their LIMIT, falling back to the exact scan (docs/scaling.md).
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64


class Identifiers(models.Func):
    """The underscore identifiers of a chunk's context and text, underscores taken out
    (DJANGO_SETTINGS_MODULE -> DJANGOSETTINGSMODULE): the SQL function of migration 0009, so that
    an identifier is one lexeme besides the words the parser splits it into."""

    function = "ragweb_identifiers"
    output_field = models.TextField()


def _configured_model() -> str:
    """A new collection starts on the configured model: it has nothing to re-embed."""
    return settings.EMBEDDING_MODEL


class ReembedStatus(models.TextChoices):
    NONE = "none", "Never re-embedded"
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Collection(models.Model):
    """A named set of documents with its own ingestion settings and readers/editors."""

    class Chunker(models.TextChoices):
        FIXED = "fixed", "Fixed size"
        SLIDING = "sliding", "Sliding window (overlapping)"
        RECURSIVE = "recursive", "Recursive separators"
        MARKDOWN = "markdown", "Markdown / heading-aware"
        SEMANTIC = "semantic", "Semantic (similarity threshold)"
        SEMANTIC_PERCENTILE = "semantic_percentile", "Semantic (percentile breakpoints)"
        MAXMIN = "maxmin", "Max-min semantic"

    class Contextualization(models.TextChoices):
        NONE = "none", "None"
        HEADER = "header", "Contextual chunk header (title + headings)"
        CONTEXTUAL = "contextual", "Contextual retrieval (LLM, per chunk)"
        AUTOCONTEXT = "autocontext", "AutoContext (LLM title + summary)"

    class EmbeddingMode(models.TextChoices):
        PLAIN = "plain", "Per chunk"
        NEIGHBOURS = "neighbours", "Per chunk, blended with the neighbouring chunks"
        LATE = "late", "Late chunking"

    # NEIGHBOURS adds this share of each adjacent chunk's vector to a chunk's own (chunk_vectors): tuned on
    # the development set, 0.25 / 0.35 / 0.5 gave vector MRR@10 0.908 / 0.917 / 0.907 (docs/evaluation.md,
    # "What moved the figures"). Part of pipeline_signature: changing it rebuilds such collections.
    NEIGHBOUR_WEIGHT = 0.35

    slug = models.SlugField(max_length=100, unique=True, error_messages={"unique": SLUG_UNAVAILABLE})
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    chunker = models.CharField(max_length=32, choices=Chunker.choices, default=Chunker.MARKDOWN)
    chunk_size = models.PositiveIntegerField(default=200, help_text="Target chunk size in model tokens.")
    chunk_overlap = models.PositiveIntegerField(default=50, help_text="Overlap in tokens (sliding window only).")
    semantic_threshold = models.FloatField(
        default=0.5, help_text="Similarity threshold (semantic), or breakpoint percentile / 100.")
    contextualization = models.CharField(
        max_length=32, choices=Contextualization.choices, default=Contextualization.HEADER)
    embedding_mode = models.CharField(max_length=16, choices=EmbeddingMode.choices,
                                      default=EmbeddingMode.NEIGHBOURS)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="owned_collections")
    is_public = models.BooleanField(default=False, help_text="Every signed-in user may read it.")
    readers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="readable_collections")
    editors = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="editable_collections")
    # Teams: every member of a reader group reads it, of an editor group also writes (corpus.permissions).
    reader_groups = models.ManyToManyField("auth.Group", blank=True, related_name="readable_collections")
    editor_groups = models.ManyToManyField("auth.Group", blank=True, related_name="editable_collections")
    created_at = models.DateTimeField(auto_now_add=True)
    # The model its searched vectors come from: the column model's (corpus.vectors.column_model) are in Chunk.embedding,
    # any other's in ChunkVector. A re-embed (corpus.reembed) switches it once every chunk has a
    # vector of reembed_model.
    embedding_model = models.CharField(max_length=300, default=_configured_model, editable=False)
    reembed_model = models.CharField(max_length=300, blank=True, editable=False,
                                     help_text="The model a re-embed is moving it to; empty when none runs.")
    reembed_status = models.CharField(max_length=16, choices=ReembedStatus.choices, default=ReembedStatus.NONE,
                                      editable=False)
    reembed_done = models.PositiveIntegerField(default=0, editable=False)
    reembed_total = models.PositiveIntegerField(default=0, editable=False)
    reembed_started_at = models.DateTimeField(null=True, blank=True, editable=False)
    reembed_finished_at = models.DateTimeField(null=True, blank=True, editable=False)
    reembed_error = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(chunk_size__gte=CHUNK_SIZE_MIN) & Q(chunk_size__lte=CHUNK_SIZE_MAX),
                                   name="collection_chunk_size_range"),
            models.CheckConstraint(condition=Q(chunk_overlap__lt=F("chunk_size")),
                                   name="collection_overlap_below_size"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """The check constraints as messages naming the field (the constraints' own name the
        constraint): every form, the admin and the services validate through full_clean()."""
        size, overlap = self.chunk_size, self.chunk_overlap
        if self.slug and CollectionSlug.objects.filter(slug=self.slug).exclude(collection_id=self.pk).exists():
            raise ValidationError({"slug": SLUG_UNAVAILABLE})
        if not isinstance(size, int):
            return  # clean_fields() reports it
        if not CHUNK_SIZE_MIN <= size <= CHUNK_SIZE_MAX:
            raise ValidationError({"chunk_size": f"The chunk size must be between {CHUNK_SIZE_MIN} and "
                                                 f"{CHUNK_SIZE_MAX} tokens."})
        if isinstance(overlap, int) and overlap >= size:
            raise ValidationError({"chunk_overlap": "The overlap must be smaller than the chunk size."})

    @property
    def overlapping(self) -> bool:
        """Overlapping chunks break RSE's contiguity, so such collections get top-k context."""
        return self.chunker == self.Chunker.SLIDING

    def pipeline_signature(self) -> str:
        """Settings (and the parser's text version) that shape chunks; a document built under others must be rebuilt.
        The embedding model is not one: a change of model is a re-embed (corpus.reembed), not a re-ingest."""
        embedding = self.embedding_mode
        if embedding == self.EmbeddingMode.NEIGHBOURS:
            embedding += f"({self.NEIGHBOUR_WEIGHT})"
        return (f"{self.chunker}:{self.chunk_size}:{self.chunk_overlap}:{self.semantic_threshold}:"
                f"{self.contextualization}:{embedding}:{column_model()}:text{TEXT_VERSION}")

    @property
    def vectors_in_column(self) -> bool:
        """Its searched vectors are Chunk.embedding (else ChunkVector rows of embedding_model)."""
        return self.embedding_model == column_model()


class CollectionSlug(models.Model):
    """A slug a collection had before it was renamed. It stays reserved for that collection (no
    other may take it) and still finds it (corpus.permissions.collection_for), so a stored
    conversation or a /v1 client's old model name `ragweb/<old slug>` never reaches another
    owner's collection. Deleting the collection frees its old slugs."""

    slug = models.SlugField(max_length=100, unique=True)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="old_slugs")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return f"{self.slug} → {self.collection_id}"


class ShareInvitation(models.Model):
    """An owner's offer to share a collection with a person, waiting for their consent: until they
    accept it (corpus.sharing), nothing of the collection reaches their searches, answers or lists.
    Accepting makes them a reader or an editor (`role`); declining or withdrawing deletes it."""

    class Role(models.TextChoices):
        READ = "read", "Read"
        WRITE = "write", "Read and change documents"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="share_invitations")
    role = models.CharField(max_length=8, choices=Role.choices, default=Role.READ)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["collection", "user"], name="share_invitation_once")]

    def __str__(self) -> str:
        return f"{self.user} invited to {self.collection} ({self.role})"


class ShareDecline(models.Model):
    """A person's "no" to one sharer's invitation to a collection, remembered so that the sharer
    cannot send it again at once (corpus.sharing.DECLINE_COOL_OFF). Not an invitation: nothing
    that lists or counts invitations sees it. One row per (collection, person, sharer); declining
    again moves `declined_at`; accepting an invitation to the collection later forgets it."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    declined_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["collection", "user", "invited_by"],
                                               name="share_decline_once")]

    def __str__(self) -> str:
        return f"{self.user} declined {self.invited_by}'s invitation to {self.collection}"


class Document(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        PARSING = "parsing"
        CHUNKING = "chunking"
        CONTEXTUALIZING = "contextualizing"
        EMBEDDING = "embedding"
        READY = "ready"
        FAILED = "failed"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=500, blank=True)
    source = models.CharField(max_length=1024, help_text="Path relative to the ingested folder, file name or URL.")
    file = models.FileField(upload_to="documents/%Y/%m/", max_length=500, blank=True)
    media_type = models.CharField(max_length=100, blank=True)
    content_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the stored file.")
    built_hash = models.CharField(max_length=64, blank=True, help_text="content_hash the current chunks come from.")
    built_signature = models.CharField(max_length=300, blank=True, help_text="Collection settings of the chunks.")
    text = models.TextField(blank=True)
    pages = models.JSONField(default=list, blank=True, help_text="Offsets in text where each PDF page starts.")
    summary = models.TextField(blank=True, help_text="AutoContext summary (LLM).")
    metadata = models.JSONField(default=dict, blank=True, help_text="Source, media type, title, author, dates and "
                                                                    "tags (corpus.metadata); search filters read it.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    ingested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["collection", "source"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "source"], name="document_unique_source"),
            models.CheckConstraint(condition=Q(progress_done__lte=F("progress_total")),
                                   name="document_progress_bounded"),
        ]
        indexes = [models.Index(fields=["status"])]

    def __str__(self) -> str:
        return self.title or self.source

    @property
    def in_progress(self) -> bool:
        """A worker is (or should be) processing it."""
        return self.status in IN_PROGRESS

    def is_current(self) -> bool:
        """Built from its current content under its collection's current settings."""
        return (self.status == self.Status.READY and bool(self.built_hash)
                and self.built_hash == self.content_hash
                and self.built_signature == self.collection.pipeline_signature())

    def page_at(self, offset: int) -> int | None:
        """1-based page number holding the character at `offset`, for paged (PDF) documents."""
        return page_number(self.pages, offset)


IN_PROGRESS = (Document.Status.PARSING, Document.Status.CHUNKING, Document.Status.CONTEXTUALIZING,
               Document.Status.EMBEDDING)


class Chunk(models.Model):
    """A span [start, end) of its document's text. Chunks of one document do not overlap
    (sliding-window collections excepted) and, concatenated in order, give back the text."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    chunk_index = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    heading_path = models.TextField(blank=True, help_text="Headings above the chunk, joined with ' > '.")
    context = models.TextField(blank=True, help_text="Header or LLM context used for indexing, never in text.")
    page = models.PositiveIntegerField(null=True, blank=True)
    token_count = models.PositiveIntegerField(default=0, help_text="Model tokens in text.")
    embedding = CompactVectorField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True)
    # Published chunks start outside the HNSW graph (its index is partial, WHERE in_graph), so the
    # publish step pays no graph insert; corpus.graph moves them in later and searches scan the
    # rest exactly (chat/retrieval/vector.py).
    in_graph = models.BooleanField(default=False, editable=False)
    search = models.GeneratedField(
        expression=(SearchVector("context", "text", config=SEARCH_CONFIG)
                    + SearchVector(Identifiers("context", "text"), config="simple")),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["document", "chunk_index"]
        constraints = [
            models.UniqueConstraint(fields=["document", "chunk_index"], name="chunk_unique_index"),
            models.CheckConstraint(condition=Q(end__gt=F("start")), name="chunk_nonempty_span"),
        ]
        indexes = [
            HnswIndex(name="chunk_embedding_hnsw", fields=["embedding"], m=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION,
                      opclasses=["vector_cosine_ops"], condition=Q(in_graph=True)),
            # The graph's tail (published, not yet merged) by document: what a search scans exactly.
            models.Index(name="chunk_graph_tail", fields=["document"], condition=Q(in_graph=False)),
        ]

    def __str__(self) -> str:
        return f"{self.document} #{self.chunk_index}"


class ChunkVector(models.Model):
    """A chunk's vector from a model other than the column's (corpus.vectors.column_model), of that model's dimension.

    The column has no fixed dimension; each model has a partial HNSW index on
    (embedding::vector(D)) WHERE model = '<model>', created by corpus.reembed.store.ensure_index."""

    pk = models.CompositePrimaryKey("chunk", "model")
    # No index of its own: the primary key (chunk_id, model) starts with it.
    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="vectors", db_index=False)
    model = models.CharField(max_length=300)
    embedding = VectorField()

    def __str__(self) -> str:
        return f"{self.chunk_id} ({self.model})"


class LLMSettings(models.Model):
    """The answering LLM as staff set it in the admin: a single row (pk 1). The environment's
    LLM_BASE_URL (with LLM_MODEL, LLM_API_KEY) wins over it; corpus.llm.current decides. The key is
    stored encrypted (corpus.llm_secret) and never shown again; writes go through
    corpus.llm_settings.llm_settings_save."""

    SINGLETON = 1

    base_url = models.URLField(max_length=500, blank=True, help_text="An OpenAI-compatible API, e.g. "
                               "https://api.openai.com/v1 or http://127.0.0.1:8080/v1")
    model = models.CharField(max_length=200, blank=True)
    api_key_encrypted = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        verbose_name = verbose_name_plural = "LLM settings"
        constraints = [models.CheckConstraint(condition=Q(pk=1), name="llmsettings_singleton")]

    def __str__(self) -> str:
        return f"{self.model} at {self.base_url}" if self.base_url else "No LLM (extractive answers)"
