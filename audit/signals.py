"""Events recorded from Django's signals, so that every way of doing the thing is covered (the login
page, the admin, single sign-on, manage.py commands):
- sign-ins, failed sign-ins and sign-outs (the auth signals);
- group membership, the staff and superuser flags and passwords of users (model signals; who did it
  comes from the request being served, audit.context, when there is one).
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.db.models.signals import m2m_changed, post_save, pre_save
from django.dispatch import receiver

from audit.context import current_request
from audit.models import Action
from audit.services import event_record

User = get_user_model()
ROLE_FLAGS = ("is_staff", "is_superuser")


@receiver(user_logged_in, dispatch_uid="audit_sign_in")
def _signed_in(sender, request, user, **kwargs) -> None:
    event_record(Action.SIGN_IN, actor=user, target=user, request=request)


@receiver(user_login_failed, dispatch_uid="audit_sign_in_failed")
def _sign_in_failed(sender, credentials, request=None, **kwargs) -> None:
    # Only the name tried (Django masks the password in `credentials`), and only when it is an
    # account's name: people type their password into the name field, and that must not be kept.
    tried = str(credentials.get(User.USERNAME_FIELD, credentials.get("username", "")))[:150]
    if tried and not User._default_manager.filter(**{User.USERNAME_FIELD: tried}).exists():
        tried = f"unknown name #{name_digest(tried)}"
    event_record(Action.SIGN_IN_FAILED, target=tried or None, detail={"username": tried}, request=request)


def name_digest(name: str) -> str:
    """A short keyed digest of a name that is no account's: repeated tries of one name can be told
    apart from tries of many, and without SECRET_KEY it cannot be guessed back."""
    key = hashlib.sha256(b"ragweb audit: unknown sign-in names " + settings.SECRET_KEY.encode()).digest()
    return hmac.new(key, name.encode(), hashlib.sha256).hexdigest()[:12]


@receiver(user_logged_out, dispatch_uid="audit_sign_out")
def _signed_out(sender, request, user, **kwargs) -> None:
    if user is not None:  # None when nobody was signed in
        event_record(Action.SIGN_OUT, actor=user, target=user, request=request)


@receiver(pre_save, sender=User, dispatch_uid="audit_user_before_save")
def _user_before_save(sender, instance, raw=False, update_fields=None, **kwargs) -> None:
    """Note what a save changes, for _user_saved to record once the row is written."""
    instance._audit_roles, instance._audit_password = {}, False
    if raw or (update_fields is not None and not set(update_fields) & {*ROLE_FLAGS, "password"}):
        return  # loading fixtures; or e.g. last_login written at sign-in
    before = User._default_manager.filter(pk=instance.pk).values(*ROLE_FLAGS).first() if instance.pk else None
    was = before or dict.fromkeys(ROLE_FLAGS, False)
    instance._audit_roles = {flag: [was[flag], getattr(instance, flag)] for flag in ROLE_FLAGS
                             if was[flag] != getattr(instance, flag)}
    # set_password() keeps the new raw password in _password until the save; a hash upgraded at
    # sign-in does not (check_password clears it), so this is a person choosing a password.
    instance._audit_password = before is not None and getattr(instance, "_password", None) is not None


@receiver(post_save, sender=User, dispatch_uid="audit_user_saved")
def _user_saved(sender, instance, raw=False, **kwargs) -> None:
    if raw:
        return
    request = current_request()
    roles = getattr(instance, "_audit_roles", None)
    if roles:
        event_record(Action.ROLE_CHANGED, target=instance, request=request, detail=roles)
    if getattr(instance, "_audit_password", False):
        event_record(Action.PASSWORD_CHANGED, target=instance, request=request)
    instance._audit_roles, instance._audit_password = {}, False


@receiver(m2m_changed, sender=User.groups.through, dispatch_uid="audit_groups_changed")
def _groups_changed(sender, instance, action, reverse, model, pk_set, **kwargs) -> None:
    """One event per user whose groups changed: {"added": [names]} or {"removed": [names]}."""
    if action == "pre_clear":  # the members or groups about to go, for post_clear
        related = instance.groups if not reverse else instance.user_set
        instance._audit_cleared = set(related.values_list("pk", flat=True))
        return
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    pks = set(pk_set or ()) if action != "post_clear" else getattr(instance, "_audit_cleared", set())
    if not pks:
        return
    change = "added" if action == "post_add" else "removed"
    request = current_request()
    if reverse:  # group.user_set.add(...): the users changed
        for user in User._default_manager.filter(pk__in=pks):
            event_record(Action.GROUPS_CHANGED, target=user, request=request, detail={change: [instance.name]})
    else:
        names = sorted(Group.objects.filter(pk__in=pks).values_list("name", flat=True))
        event_record(Action.GROUPS_CHANGED, target=instance, request=request, detail={change: names})
