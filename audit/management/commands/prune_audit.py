from django.core.management.base import BaseCommand, CommandError

from audit.services import events_prune


class Command(BaseCommand):
    help = "Delete audit events older than AUDIT_RETENTION_DAYS days (or --days)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--days", type=int, default=None, help="Keep this many days instead.")

    def handle(self, *args, days: int | None, **options) -> None:
        if days is not None and days < 0:
            raise CommandError("--days must be 0 or more.")
        deleted = events_prune(days=days)
        self.stdout.write(f"Deleted {deleted} audit event(s).")
