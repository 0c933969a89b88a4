"""Who a source syncs for. A source writes documents in its owner's name (created_by), so it stops
when they lose write access to its collection: sources_pause_unwritable pauses it, with the reason
shown on the Sources page, the API and the admin, until someone who may write takes it over
(source_take_over). Operator sources (no owner: added on the command line) always run."""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

import audit
from audit.models import Action
from corpus import permissions
from sources.folders import may_add_folder
from sources.models import Source

logger = logging.getLogger(__name__)


def _pause_reason(source: Source) -> str:
    return (f"Paused: {source.created_by} may no longer change documents of the collection "
            f"{source.collection.slug!r}, and the source syncs in their name. Someone who may takes it over to "
            "resume it.")


def sources_pause_unwritable(*, collection_ids=None, user_ids=None, source_ids=None) -> list[int]:
    """Pause every running source (of `collection_ids`, made by `user_ids`, among `source_ids`;
    None: any) whose owner (created_by) may no longer write to its collection: it would keep
    writing in their name.
    Each is audited ("source paused", with the reason). Returns the paused sources' ids. Operator
    sources (no owner) are left alone. Called when sharing or group membership changes and before
    every sync (sources.sync)."""
    sources = Source.objects.filter(paused_reason="", created_by__isnull=False).select_related("collection",
                                                                                                "created_by")
    if collection_ids is not None:
        sources = sources.filter(collection_id__in=collection_ids)
    if user_ids is not None:
        sources = sources.filter(created_by_id__in=user_ids)
    if source_ids is not None:
        sources = sources.filter(pk__in=source_ids)
    paused = []
    for source in sources:
        if permissions.can_write_collection(source.created_by, source.collection):
            continue
        reason = _pause_reason(source)
        with transaction.atomic():
            if Source.objects.filter(pk=source.pk, paused_reason="").update(paused_reason=reason):
                audit.record(Action.SOURCE_PAUSED, target=source, detail={
                    "collection": source.collection.slug, "owner": source.created_by.get_username(),
                    "reason": reason})
                paused.append(source.pk)
    if paused:
        logger.info("paused sources %s: their owners lost write access", paused)
    return paused


def sources_pause_of_deleted(*, user) -> list[int]:
    """Pause the running sources of `user`, whose account is being deleted: with created_by set to
    null they would pass for operator sources, which always run, and keep writing what their site
    says with nobody answerable for it. Audited like sources_pause_unwritable. Returns their ids."""
    paused = []
    for source in Source.objects.filter(created_by=user, paused_reason="").select_related("collection"):
        reason = (f"Paused: the account of {user.get_username()}, in whose name it synced, was deleted. Someone "
                  "who may change documents of the collection takes it over to resume it.")
        with transaction.atomic():
            if Source.objects.filter(pk=source.pk, paused_reason="").update(paused_reason=reason):
                audit.record(Action.SOURCE_PAUSED, target=source, detail={
                    "collection": source.collection.slug, "owner": user.get_username(), "reason": reason})
                paused.append(source.pk)
    return paused


FOLDER_TAKE_OVER = ("Only staff, and those an administrator gives the permission \"Can add server folder sources\", "
                    "may take over a server folder source: it reads the server's files in its owner's name.")


def source_take_over(*, source: Source, user, request=None) -> Source:
    """Make `user` (who may write to the source's collection: the caller checked) the source's
    owner, and resume it if it was paused (a scheduled one is due at once). Audited ("source taken
    over", from whom). A folder source needs what adding one needs (may_add_folder): otherwise an
    editor could resume, in their own name, a server folder they could not have added; Denied (403)."""
    if source.kind == Source.Kind.FOLDER and not may_add_folder(user):
        raise permissions.Denied(FOLDER_TAKE_OVER, status=403)
    with transaction.atomic():
        locked = Source.objects.select_for_update(of=("self",)).select_related("created_by").get(pk=source.pk)
        previous = locked.created_by.get_username() if locked.created_by else None
        was_paused = bool(locked.paused_reason)
        locked.created_by, locked.paused_reason = user, ""
        if was_paused and locked.interval():
            locked.next_sync_at = timezone.now()
        locked.save(update_fields=["created_by", "paused_reason", "next_sync_at"])
        audit.record(Action.SOURCE_TAKEN_OVER, target=locked, actor=user, request=request,
                     detail={"from": previous, "was_paused": was_paused})
    return locked
