"""A collection's sources (a web page, a site, a server folder) and which document each produced.

Source rows hold what a sync needs (where, how far, how often, which tags) and what the last sync
found (counts, failures with their reasons, when the next one is due). SourceDocument links a
document to the source item it came from, with what incremental sync compares (ETag /
Last-Modified for web pages, mtime + size for files, and the content hash for both).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import MD5

from corpus.models import Collection, Document

MAX_PAGES_LIMIT = 10_000  # the most pages (or files) one source may hold
MAX_DEPTH_LIMIT = 10
STALE_AFTER = timedelta(hours=1)
FAILURES_KEPT = 50  # failures listed per sync; the count says how many there were


class SourceQuerySet(models.QuerySet):
    def due(self, now):
        """Sources whose scheduled sync is due: not queued or syncing already, unless that has lasted
        STALE_AFTER past the due time (a lost message, a killed worker: the sync's lock is the truth)."""
        waiting = Q(state__in=[Source.State.QUEUED, Source.State.SYNCING], next_sync_at__gt=now - STALE_AFTER)
        return (self.exclude(schedule=Source.Schedule.NONE).filter(next_sync_at__lte=now, paused_reason="")
                .exclude(waiting))


class Source(models.Model):
    class Kind(models.TextChoices):
        URL = "url", "Web page"
        SITE = "site", "Web site (sitemap or crawl)"
        FOLDER = "folder", "Server folder"

    class Schedule(models.TextChoices):
        NONE = "none", "Only when asked"
        HOURLY = "hourly", "Every hour"
        DAILY = "daily", "Every day"
        WEEKLY = "weekly", "Every week"

    class State(models.TextChoices):
        IDLE = "idle", "Idle"
        QUEUED = "queued", "Sync queued"
        SYNCING = "syncing", "Syncing"
        FAILED = "failed", "Last sync failed"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    url = models.URLField(max_length=2000, blank=True, help_text="The page, or the site's start URL / sitemap.")
    path = models.CharField(max_length=1024, blank=True,
                            help_text="The folder (resolved), under one of the SOURCES_FOLDERS.")
    schedule = models.CharField(max_length=10, choices=Schedule.choices, default=Schedule.DAILY)
    max_pages = models.PositiveIntegerField(default=100, help_text="Most pages (site) or files (folder) kept.")
    max_depth = models.PositiveIntegerField(default=3, help_text="Most links followed from the start URL (site).")
    tags = models.JSONField(default=list, blank=True, help_text="Tags given to every document of the source.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   help_text="Whose source it is: it syncs in their name while they may write "
                                             "to the collection (None: the operator's, from the command line).")
    paused_reason = models.TextField(blank=True, help_text="Why it does not sync (empty: it does): its owner "
                                                           "lost write access; someone who may write takes it over.")
    created_at = models.DateTimeField(auto_now_add=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.IDLE)
    error = models.TextField(blank=True, help_text="Why the last sync failed as a whole (nothing was removed).")
    sync_started_at = models.DateTimeField(null=True, blank=True)
    sync_finished_at = models.DateTimeField(null=True, blank=True)
    next_sync_at = models.DateTimeField(null=True, blank=True)
    last_new = models.PositiveIntegerField(default=0)
    last_changed = models.PositiveIntegerField(default=0)
    last_unchanged = models.PositiveIntegerField(default=0)
    last_removed = models.PositiveIntegerField(default=0)
    last_failed = models.PositiveIntegerField(default=0)
    failures = models.JSONField(
        default=list, blank=True,
        help_text=f'Failures of the last sync, [{{"item", "reason"}}], at most {FAILURES_KEPT}.')
    sync_round = models.JSONField(
        default=dict, blank=True,
        help_text="An unfinished sync round: the crawl so far, or the items listed and how many were synced "
                  "(empty: the next sync starts a new round).")

    objects = SourceQuerySet.as_manager()

    class Meta:
        ordering = ["collection", "pk"]
        # Folder sources read the server's files, not the user's: staff may add them, and whoever is given
        # this permission in the admin (a user, or a group; sources.folders.may_add_folder decides).
        permissions = [("add_folder_source", "Can add server folder sources")]
        constraints = [
            models.CheckConstraint(
                condition=(Q(kind="folder", path__gt="", url="") | Q(kind__in=["url", "site"], url__gt="", path="")),
                name="source_location_matches_kind"),
            models.CheckConstraint(condition=Q(max_pages__gte=1) & Q(max_pages__lte=MAX_PAGES_LIMIT),
                                   name="source_max_pages_range"),
            models.CheckConstraint(condition=Q(max_depth__lte=MAX_DEPTH_LIMIT), name="source_max_depth_range"),
            # A collection holds a location once. Hashes, not the columns: a 2,000-character URL of
            # multi-byte characters would not fit a b-tree entry (2,704 bytes).
            models.UniqueConstraint(F("collection"), F("kind"), MD5("url"), MD5("path"),
                                    name="source_unique_location"),
        ]
        indexes = [models.Index(fields=["next_sync_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.location}"

    @property
    def location(self) -> str:
        return self.url or self.path

    @property
    def counts(self) -> dict[str, int]:
        """The last sync's counts, under the names of the API contract."""
        return {"new": self.last_new, "changed": self.last_changed, "unchanged": self.last_unchanged,
                "removed": self.last_removed, "failed": self.last_failed}

    def interval(self) -> timedelta | None:
        return SCHEDULE_INTERVALS.get(self.schedule)

    def next_sync_after(self, moment) -> object | None:
        """When the next scheduled sync is due after a sync at `moment` (None: only when asked)."""
        interval = self.interval()
        return moment + interval if interval else None


SCHEDULE_INTERVALS = {Source.Schedule.HOURLY: timedelta(hours=1), Source.Schedule.DAILY: timedelta(days=1),
                      Source.Schedule.WEEKLY: timedelta(weeks=1)}


class SourceDocument(models.Model):
    """The document a source's item (a page's URL, a file's path in the folder) became, and what the
    next sync compares to tell whether the item changed."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="links")
    document = models.OneToOneField(Document, on_delete=models.CASCADE, related_name="source_link")
    key = models.CharField(max_length=2000, help_text="The page's URL or the file's path in the folder.")
    etag = models.CharField(max_length=500, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    mtime_ns = models.BigIntegerField(null=True, blank=True)
    size = models.BigIntegerField(null=True, blank=True)
    content_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of what was ingested.")
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source", "key"]
        constraints = [models.UniqueConstraint(fields=["source", "key"], name="source_document_unique_key")]

    def __str__(self) -> str:
        return self.key
