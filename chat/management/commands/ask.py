"""python manage.py ask "question" [--collection SLUG] [--json]: the chat pipeline from a shell."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from chat.answering.citations import chunk_range_label
from chat.answering.payload import answer_payload
from chat.models import Conversation
from chat.questions import InvalidQuestion, clean_question
from chat.retrieval.rse import PRESETS
from chat.services import conversation_start, message_ask
from corpus.permissions import Denied, collection_for


class Command(BaseCommand):
    help = "Answer a question from the documents, with citations (streams the answer unless --json)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("question")
        parser.add_argument("--collection", help="Search only this collection (slug).")
        parser.add_argument("--user", help="Answer as this user (their readable collections; "
                                           "default: the first superuser).")
        parser.add_argument("--rse", choices=[*PRESETS, "none"], default="balanced")
        parser.add_argument("--json", action="store_true", help="Print the /api/ask/ response as JSON.")

    def handle(self, *args, question: str, collection: str | None, user: str | None, rse: str,
               json: bool, **options) -> None:
        if not question.strip():
            raise CommandError("The question is empty.")
        try:
            question = clean_question(question)
        except InvalidQuestion as exc:
            raise CommandError(str(exc)) from exc
        asker = self._user(user)
        if collection:
            try:
                collection_for(asker, collection)
            except Denied as exc:
                raise CommandError(str(exc)) from exc
        conversation = conversation_start(user=asker, title=question, source=Conversation.Source.CLI)
        events = message_ask(conversation=conversation, question=question, collection_slug=collection,
                             rse=None if rse == "none" else rse, stream=not json)
        done = None
        for done in events:
            if done.kind == "token":
                self.stdout.write(done.text, ending="")
                self.stdout.flush()
        message = done.message
        if json:
            self.stdout.write(_dumps(answer_payload(message)))
        else:
            self.stdout.write("")
            if message.citations:
                self.stdout.write("\nSources:")
                for c in message.citations:
                    page = f", page {c['page']}" if c.get("page") else ""
                    self.stdout.write(f"  [{c['n']}] {c['document']['title'] or c['document']['source']} — "
                                      f"{c['document']['source']}{page}, {chunk_range_label(c['start'], c['end'])}")
        if done.not_found:
            if not json:  # an answer, not a failure: said plainly, exit status 0
                self.stdout.write(f"Not found: {message.error}")
        elif message.error:
            raise CommandError(message.error)

    def _user(self, username: str | None):
        users = get_user_model().objects.filter(is_active=True)
        if username:
            found = users.filter(username=username).first()
            if found is None:
                raise CommandError(f"No active user {username!r}.")
            return found
        found = users.filter(is_superuser=True).order_by("pk").first()
        if found is None:
            raise CommandError("No superuser exists; pass --user USERNAME or run createsuperuser.")
        return found


def _dumps(payload: dict) -> str:
    return json.dumps(payload, indent=2, ensure_ascii=False)
