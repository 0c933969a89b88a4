"""What a personal API token may do: the one place that decides it, for every DRF view.

A read-only token may use the safe methods (GET, HEAD, OPTIONS) and the POSTs that only read
(views that set `read_like = True`: search, ask, /v1 chat completions); any other request made
with it (uploads, collection changes, deletes, re-ingest, feedback, making or revoking tokens)
is refused with 403. A session, or a token that is not read-only, is not limited here:
corpus.permissions decides what the user may do with each collection.
"""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from accounts.models import ApiToken


class TokenScope(BasePermission):
    message = ("This token is read-only: it may read, search and ask, not change anything. "
               "Use a token that is not read-only, or sign in.")

    def has_permission(self, request, view) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken) or not token.read_only:
            return True
        return request.method in SAFE_METHODS or getattr(view, "read_like", False)
