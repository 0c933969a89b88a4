"""Sign-ins, failed sign-ins and sign-outs, from Django's auth signals (every way of signing in
sends them: the login page, the admin's, single sign-on back ends)."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.dispatch import receiver

from audit.models import Action
from audit.services import event_record


@receiver(user_logged_in, dispatch_uid="audit_sign_in")
def _signed_in(sender, request, user, **kwargs) -> None:
    event_record(Action.SIGN_IN, actor=user, target=user, request=request)


@receiver(user_login_failed, dispatch_uid="audit_sign_in_failed")
def _sign_in_failed(sender, credentials, request=None, **kwargs) -> None:
    # Only the name tried: Django masks the password in `credentials`, and we do not keep it anyway.
    username = str(credentials.get("username", ""))[:150]
    event_record(Action.SIGN_IN_FAILED, target=username or None, detail={"username": username}, request=request)


@receiver(user_logged_out, dispatch_uid="audit_sign_out")
def _signed_out(sender, request, user, **kwargs) -> None:
    if user is not None:  # None when nobody was signed in
        event_record(Action.SIGN_OUT, actor=user, target=user, request=request)
