"""A source syncs in its owner's name, so it stops when they lose write access to its collection
(sources.services.sources_pause_unwritable): checked whenever an editor, an editor group, a
group's members, a collection or a user changes. The sync checks again before it runs, whatever
the path that took the access away."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_save, pre_delete
from django.dispatch import receiver

from corpus.models import Collection
from sources.ownership import sources_pause_of_deleted, sources_pause_unwritable

LOSSES = ("post_remove", "post_clear")


@receiver(m2m_changed, sender=Collection.editors.through)
@receiver(m2m_changed, sender=Collection.editor_groups.through)
def _editors_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if action not in LOSSES:
        return
    if not reverse:  # collection.editors.remove(...)
        sources_pause_unwritable(collection_ids=[instance.pk])
    elif pk_set:  # user.editable_collections.remove(collections...)
        sources_pause_unwritable(collection_ids=list(pk_set))
    else:
        sources_pause_unwritable()


@receiver(m2m_changed, sender=get_user_model().groups.through)
def _groups_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if action not in LOSSES:
        return
    if not reverse:  # user.groups.remove(...)
        sources_pause_unwritable(user_ids=[instance.pk])
    else:  # group.user_set.remove(...)
        sources_pause_unwritable(user_ids=list(pk_set) if pk_set else None)


@receiver(post_save, sender=Collection)
def _collection_saved(sender, instance, created, **kwargs) -> None:
    if not created:  # e.g. a superuser gave it another owner
        sources_pause_unwritable(collection_ids=[instance.pk])


@receiver(post_save, sender=get_user_model())
def _user_saved(sender, instance, created, **kwargs) -> None:
    if not created:  # e.g. deactivated, or no longer a superuser
        sources_pause_unwritable(user_ids=[instance.pk])


@receiver(pre_delete, sender=get_user_model())
def _user_deleted(sender, instance, **kwargs) -> None:
    sources_pause_of_deleted(user=instance)  # else, owner gone, they would pass for operator sources
