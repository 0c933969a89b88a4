"""What one user may ask of the workers beyond uploads (accounts.quotas): forced re-ingests, which
rebuild a document's chunks and vectors even when nothing changed. The documents page and the API
share the budget; a re-ingest that is not forced costs nothing when the document is up to date
and is not counted."""

from __future__ import annotations

from accounts.quotas import UserQuota


class ForcedReingestQuota(UserQuota):
    """Forced re-ingests per user: each parses and embeds a whole document again (a 10 MB PDF is
    minutes of a worker), so one person cannot keep the workers busy rebuilding the same files."""

    scope = "forced_reingest"
    rate = "60/hour"
