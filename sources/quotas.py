"""What one user may ask of the sources (accounts.quotas): how many sources they may add, and how
often they may ask for a sync now (the API and the sources page share the budget). Scheduled
syncs are not counted: their pace is the schedule's."""

from __future__ import annotations

from accounts.quotas import UserQuota

# Sources one user may have added (over every collection). Each is synced on its schedule by the
# sources worker; a person keeping more than this many sites in sync is an operator's job (admin).
MAX_SOURCES_PER_USER = 100


class SyncNowQuota(UserQuota):
    """"Sync now" requests per user: a sync already queued or running makes another a no-op, so
    this bounds the queue's no-ops and the requests a flood sends, not the syncs themselves."""

    scope = "source_sync_now"
    rate = "30/hour"
