"""Conversations and their messages. Assistant messages keep what the answer was built from:
the standalone query, the citations ([n] → document segment) and the chunk relevance values."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Conversation(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    title = models.CharField(max_length=200, blank=True)
    # The collection last picked for this conversation; null = every collection the user may read.
    collection = models.ForeignKey("corpus.Collection", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["user", "-updated_at"])]

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

    class Mode(models.TextChoices):
        NONE = "", "None"
        LLM = "llm", "LLM"
        EXTRACTIVE = "extractive", "Extractive (no LLM configured)"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETE)
    mode = models.CharField(max_length=16, choices=Mode.choices, blank=True, default=Mode.NONE)
    error = models.TextField(blank=True, help_text="A message for the user when the answer failed.")
    query = models.TextField(blank=True, help_text="The standalone query used for retrieval.")
    collection_slug = models.CharField(max_length=100, blank=True)
    # [{"n", "document": {"id","title","source"}, "start", "end", "char_start", "char_end", "text", "page",
    #   "score"}] — numbered as in the prompt.
    citations = models.JSONField(default=list, blank=True)
    # {"<document id>": {"<chunk index>": relevance 0-1}} for the retrieved chunks (the relevance chart).
    relevance = models.JSONField(default=dict, blank=True)
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
