"""What one user may ask of the workers beyond uploads (accounts.quotas): forced re-ingests, which
rebuild a document's chunks and vectors even when nothing changed, and changes of a collection's
chunk settings, which rebuild all of its documents. The documents page and the API share each
budget; a re-ingest that is not forced costs nothing when the document is up to date and is not
counted, nor is a change of a collection's name or description."""

from __future__ import annotations

from django.http import HttpRequest

from accounts.quotas import UserQuota, wait_seconds
from corpus import services
from corpus.models import Collection, Document


class ForcedReingestQuota(UserQuota):
    """Forced re-ingests per user: each parses and embeds a whole document again (a 10 MB PDF is
    minutes of a worker), so one person cannot keep the workers busy rebuilding the same files."""

    scope = "forced_reingest"
    rate = "60/hour"


class CollectionRebuildQuota(UserQuota):
    """Changes of a collection's chunk settings per user (corpus.services.collection_update_rebuilds):
    each queues every document of the collection again, so toggling the chunk size back and forth
    would keep the workers rebuilding a large collection all day."""

    scope = "collection_rebuild"
    rate = "10/hour"


class ShareQuota(UserQuota):
    """Shares per user that name someone or a group not on the collection yet (corpus.sharing.share_targets):
    each answers whether the names are people (groups) one may share with, so an endless run of them
    would list the accounts; a team is shared with in a few changes."""

    scope = "share"
    rate = "30/hour"


def move_rebuild_wait(request: HttpRequest, *, document: Document, collection: Collection) -> int | None:
    """None when `request`'s user may move `document` into `collection` now; else the seconds to
    wait. A move that rebuilds the document (services.document_move_rebuilds: the target's chunk
    settings differ) is a forced re-ingest and is counted as one: moving a document back and forth
    would rebuild it without end. Other moves cost nothing. The API and the admin's action call it."""
    if not services.document_move_rebuilds(document=document, collection=collection):
        return None
    return wait_seconds(ForcedReingestQuota, request)
