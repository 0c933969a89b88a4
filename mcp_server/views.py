"""/mcp: the MCP endpoint (streamable HTTP), authenticated by a personal API token.

`Authorization: Bearer KEY` (or `Token KEY`), the same tokens and the same checks as the REST API
(accounts.authentication): no key, an unknown, revoked or expired one is 401 before the SDK sees
the request. All tools only read, so a read-only token may use every one (`read_like`, as for
POST /api/search/). No session authentication: an MCP client is not a browser, and without
cookies there is no CSRF to guard against. A body over API_MAX_JSON_BYTES is 413.

The MCP SDK (~20 MiB resident with its dependencies) is imported by the first /mcp request, not
with the URLconf: every web process imports this module at start-up, few ever serve MCP.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from accounts.authentication import ApiTokenAuthentication, BearerApiTokenAuthentication
from accounts.permissions import TokenScope


def _too_large(request: Request) -> bool:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) > settings.API_MAX_JSON_BYTES
    except ValueError:
        return False  # gunicorn refuses a malformed Content-Length before the view


class McpView(APIView):
    # Bearer first: its scheme is the WWW-Authenticate challenge of a 401.
    authentication_classes = [BearerApiTokenAuthentication, ApiTokenAuthentication]
    permission_classes = [IsAuthenticated, TokenScope]
    read_like = True  # every tool only reads (accounts.permissions.TokenScope)
    throttle_classes: list = []  # search and ask draw on their budgets inside the tools
    schema = None  # JSON-RPC, not REST: not in the OpenAPI schema
    # POST only: stateless, there is no server-initiated stream to GET (the SDK's GET would wait for
    # one forever) and no session to DELETE; the protocol lets a server answer both 405.
    http_method_names = ["post", "options"]

    def post(self, request: Request) -> HttpResponse:
        if _too_large(request):
            limit = settings.API_MAX_JSON_BYTES
            return JsonResponse({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": f"The body is over {limit} bytes (API_MAX_JSON_BYTES)."}}, status=413)
        from mcp_server import transport  # the SDK: see the module's docstring
        from mcp_server.server import CALLER
        from mcp_server.tools import Caller

        reset = CALLER.set(Caller(request))
        try:
            return transport.handle(request._request, path=request.path, max_body=settings.API_MAX_JSON_BYTES)
        finally:
            CALLER.reset(reset)
