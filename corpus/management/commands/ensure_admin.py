"""Create the `admin` superuser once, with a random password kept in var/admin-password."""

from __future__ import annotations

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create an admin account with a random password (once) and print how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options):
        user_model = get_user_model()
        password_file = settings.VAR_DIR / "admin-password"
        if not user_model.objects.filter(username=username).exists():
            password = secrets.token_urlsafe(12)
            user_model.objects.create_superuser(username=username, email="", password=password)
            password_file.parent.mkdir(parents=True, exist_ok=True)
            password_file.write_text(password + "\n")
            password_file.chmod(0o600)
        if password_file.exists():
            hint = f"password: {password_file.read_text().strip()}  (also in {password_file})"
        else:
            hint = f"password: set earlier; change it with `python manage.py changepassword {username}`"
        port = os.environ.get("PORT", "8000")
        self.stdout.write(f"Log in at http://127.0.0.1:{port}/login/ as {username!r}, {hint}")
