"""`manage.py drf_create_token USER`: make an API token for USER and print its key (for scripts).

Replaces DRF's command of the same name (tokens are stored hashed now, so an existing key cannot be
printed again): every call makes a new token; --reset revokes the user's earlier command-line tokens.
The output keeps DRF's shape, "Generated token KEY for user USER".
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.models import ApiToken
from accounts.services import token_create, token_revoke

NAME = "command line"


class Command(BaseCommand):
    help = "Make a personal API token for a user and print its key (shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("-r", "--reset", action="store_true",
                            help=f"revoke the user's earlier tokens named {NAME!r} first")
        parser.add_argument("--name", default=NAME, help="the token's name (default: %(default)s)")
        parser.add_argument("--read-only", action="store_true",
                            help="a token that may read, search and ask, never change anything")

    def handle(self, *args, username: str, reset: bool, name: str, read_only: bool, **options):
        user = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: username}).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        try:
            with transaction.atomic():  # the old tokens go only if the new one is made
                if reset:  # each revocation audited, like one in the web page or the admin
                    for token_id in ApiToken.objects.filter(user=user, name=name).values_list("pk", flat=True):
                        token_revoke(user=user, token_id=token_id)
                _, key = token_create(user=user, name=name, read_only=read_only)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(f"Generated token {key} for user {username}")
