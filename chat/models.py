"""Conversations and their messages. Assistant messages keep what the answer was built from:
the standalone query, the citations ([n] → document segment) and the chunk relevance values."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef, Q, Subquery


class ConversationQuerySet(models.QuerySet):
    def chats_of(self, user) -> ConversationQuerySet:
        """`user`'s conversations from the chat page that hold at least one message: what the
        sidebar lists (questions from the API and the command line are kept apart)."""
        return self.filter(user=user, source=Conversation.Source.CHAT).filter(
            Exists(Message.objects.filter(conversation=OuterRef("pk"))))

    def others_of(self, user) -> ConversationQuerySet:
        """`user`'s conversations asked through the API or the command line."""
        return self.filter(user=user).exclude(source=Conversation.Source.CHAT)

    def matching(self, text: str) -> ConversationQuerySet:
        """Conversations whose title or any message contains `text` (case-insensitive), annotated
        with `match`: the first message that contains it (None when only the title does)."""
        first_match = (Message.objects.filter(conversation=OuterRef("pk"), content__icontains=text)
                       .order_by("created_at", "id").values("content")[:1])
        return self.annotate(match=Subquery(first_match)).filter(Q(title__icontains=text) | Q(match__isnull=False))


class Conversation(models.Model):
    class Source(models.TextChoices):
        CHAT = "chat", "Chat page"
        API = "api", "API (/api/ask/)"
        CLI = "cli", "Command line (manage.py ask)"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    title = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.CHAT,
                              help_text="Where it was started; the chat page lists its own ones only.")
    # The secret of the read-only link to this conversation (chat.sharing); null while not shared.
    share_token = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    # The collection last picked for this conversation; null = every collection the user may read.
    collection = models.ForeignKey("corpus.Collection", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["user", "source", "-updated_at"])]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("chat:conversation", args=[self.pk])


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    class Status(models.TextChoices):
        STREAMING = "streaming"
        COMPLETE = "complete"
        STOPPED = "stopped", "Stopped by the user"
        FAILED = "failed"
        # Nothing retrieved was relevant enough: an answer (the reason is in `error`), not a failure.
        NOT_FOUND = "not_found", "Not found in the documents"

    class Mode(models.TextChoices):
        NONE = "", "None"
        LLM = "llm", "LLM"
        EXTRACTIVE = "extractive", "Extractive (no LLM configured)"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETE)
    mode = models.CharField(max_length=16, choices=Mode.choices, blank=True, default=Mode.NONE)
    # The LLM that wrote the answer (mode "llm"), as named by its configuration; shown in the chat.
    model = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True, help_text="A message for the user when the answer failed.")
    query = models.TextField(blank=True, help_text="The standalone query used for retrieval.")
    collection_slug = models.CharField(max_length=100, blank=True)
    # The collection the answer searched, by id (a slug can change hands); null with a slug set
    # means that collection was deleted. collection_slug stays as it was shown.
    collection = models.ForeignKey("corpus.Collection", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    # [{"n", "document": {"id","title","source"}, "start", "end", "char_start", "char_end", "text", "page",
    #   "score"}] — numbered as in the prompt.
    citations = models.JSONField(default=list, blank=True)
    confidence = models.FloatField(
        null=True, blank=True,
        help_text="How likely the reader found it that the extractive answer's best quote answers the question.")
    # {"<document id>": {"<chunk index>": relevance 0-1}} for the retrieved chunks (the relevance chart).
    relevance = models.JSONField(default=dict, blank=True)
    # The filter object the answer's search was narrowed by (chat.retrieval.filters; {} = none), so
    # that regenerating it searches the same documents.
    filters = models.JSONField(default=dict, blank=True)
    stop_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(role="assistant") | Q(mode=""), name="message_mode_assistant_only"),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    def citation(self, n: int) -> dict | None:
        for citation in self.citations:
            if citation.get("n") == n:
                return citation
        return None


class Feedback(models.Model):
    """A rating of an answer, with a copy of what the answer was made of (question, standalone
    query, sources, text), so that it outlives the answer (regenerated or deleted) and can become
    an evaluation item (`manage.py export_feedback`)."""

    class Rating(models.TextChoices):
        UP = "up", "Helpful"
        DOWN = "down", "Not helpful"

    class Kind(models.TextChoices):
        AUTO = "", "Decide from the evidence"
        FACTOID = "factoid", "Factoid (one or two sentences)"
        SECTION = "section", "Section (a whole passage)"

    message = models.OneToOneField(Message, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="feedback")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    rating = models.CharField(max_length=8, choices=Rating.choices)
    comment = models.TextField(blank=True)
    question = models.TextField(help_text="The question as the user asked it.")
    query = models.TextField(blank=True, help_text="The standalone query retrieval searched for.")
    answer = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="Why the answer failed, if it did.")
    collection_slug = models.CharField(max_length=100, blank=True, help_text="Empty: every readable collection.")
    # The numbered sources of the answer (as Message.citations) and the numbers its text cites;
    # every chunk retrieval returned, {"<document id>": {"<chunk index>": relevance}} (Message.relevance).
    sources = models.JSONField(default=list, blank=True)
    cited = models.JSONField(default=list, blank=True)
    retrieved = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=500, blank=True,
                              help_text="The document (its source path) that answers the question, chosen by the "
                                        "rater or a reviewer; empty until someone chooses.")
    evidence = models.JSONField(default=list, blank=True,
                                help_text="Phrases copied verbatim from that document that answer the question.")
    kind = models.CharField(max_length=8, choices=Kind.choices, blank=True, default=Kind.AUTO)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "feedback"
        indexes = [models.Index(fields=["rating", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_rating_display()}: {self.question[:60]}"


class SentenceVector(models.Model):
    """The embedding of one sentence as an extractive answer scores it (chat.answering.sentence_vectors),
    keyed by the model and a hash of the text, so that answers in every process find it instead of
    embedding it again. Rows belong to the document whose sources hold the text: deleting the
    document deletes them, and refilling it (re-ingested, or another model) replaces them. The same
    text in two documents has a row in each; any of them serves, the vector being the same."""

    document = models.ForeignKey("corpus.Document", on_delete=models.CASCADE, related_name="+", db_index=True)
    model = models.CharField(max_length=200)
    digest = models.BinaryField(max_length=16)  # blake2b-128 of the text, UTF-8
    vector = models.BinaryField()  # float16 row, L2-normalised before rounding (768 bytes for 384-d)

    class Meta:
        constraints = [
            # Leads with (model, digest): the one index answers' look-ups use, and no duplicates.
            models.UniqueConstraint(fields=["model", "digest", "document"], name="sentence_vector_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.model} {bytes(self.digest).hex()} (document {self.document_id})"
