"""The Tokens page: a user lists, makes and revokes their own API tokens (a new key is shown once)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.models import ApiToken
from accounts.services import token_create, token_revoke


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    new_key = None
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name or len(name) > 100:
            messages.error(request, "Give the token a name of 1 to 100 characters.")
            return redirect("accounts:tokens")
        _, new_key = token_create(user=request.user, name=name)
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "accounts/tokens.html", {"tokens": tokens, "new_key": new_key},
                  status=201 if new_key else 200)


@login_required
@require_POST
def token_delete(request: HttpRequest, pk: int) -> HttpResponse:
    if token_revoke(user=request.user, token_id=pk):
        messages.success(request, "Token revoked: clients using it are refused from now on.")
    else:
        messages.error(request, "No such token.")
    return redirect("accounts:tokens")
