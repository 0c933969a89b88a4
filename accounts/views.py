"""The Tokens page: a user lists, makes and revokes their own API tokens (a new key is shown once)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.models import ApiToken
from accounts.services import token_create, token_revoke

MAX_DAYS = 3650  # ten years: anything longer is "never"


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    """GET lists the user's tokens; POST makes one (name, `read_only` checkbox, `expires_in_days`:
    blank for never) and shows its key once (201); bad input is a message and a redirect."""
    new_key = None
    if request.method == "POST":
        days = request.POST.get("expires_in_days", "").strip()
        if days and not (days.isascii() and days.isdigit() and len(days) <= 4 and 1 <= int(days) <= MAX_DAYS):
            messages.error(request, f"Expires in: a whole number of days from 1 to {MAX_DAYS}, or blank for never.")
            return redirect("accounts:tokens")
        try:
            _, new_key = token_create(user=request.user, request=request, name=request.POST.get("name", ""),
                                      read_only=request.POST.get("read_only") == "on",
                                      expires=timezone.now() + timedelta(days=int(days)) if days else None)
        except ValidationError as exc:
            for message in exc.messages:
                messages.error(request, message)
            return redirect("accounts:tokens")
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "accounts/tokens.html", {"tokens": tokens, "new_key": new_key, "max_days": MAX_DAYS},
                  status=201 if new_key else 200)


@login_required
@require_POST
def token_delete(request: HttpRequest, pk: int) -> HttpResponse:
    if token_revoke(user=request.user, token_id=pk, request=request):
        messages.success(request, "Token revoked: clients using it are refused from now on.")
    else:
        messages.error(request, "No such token.")
    return redirect("accounts:tokens")
