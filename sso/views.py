"""The sign-in pages: the login page (the password form unless LOCAL_LOGIN is off, and the
"Sign in with <provider>" button when OIDC is configured), the provider round trip
(mozilla-django-oidc's views, endpoints from discovery), and sign-out, which also ends the
provider's session when it offers an end_session_endpoint."""

from __future__ import annotations

import logging
from urllib.parse import urlencode

import jwt
import requests
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.urls import reverse
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from accounts.signin import ThrottledAuthenticationForm
from sso.context_processors import PROVIDER_LABEL
from sso.discovery import DiscoveryError, provider_metadata, requested_scopes

logger = logging.getLogger(__name__)


def _failed(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    return render(request, "registration/sso_failed.html", {"message": message}, status=status)


def _unreachable(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.warning("sso: the identity provider cannot be reached: %s", exc)
    return _failed(request, f"{PROVIDER_LABEL.capitalize()} cannot be reached just now. Try again in a "
                            "moment; if it lasts, tell your administrator.", status=503)


class LoginView(auth_views.LoginView):
    """Django's login page with sign-in throttling; with LOCAL_LOGIN off a password is refused (403)
    before it is even checked."""

    authentication_form = ThrottledAuthenticationForm

    def post(self, request, *args, **kwargs):
        if not settings.LOCAL_LOGIN:
            response = self.render_to_response(self.get_context_data(local_login_refused=True))
            response.status_code = 403
            return response
        return super().post(request, *args, **kwargs)


def admin_login(request: HttpRequest) -> HttpResponse:
    """/admin/login/: with single sign-on, the one login page (it has the provider's button, and the password
    form unless LOCAL_LOGIN is off), coming back to the admin; without, Django's admin form as before."""
    if settings.OIDC_ISSUER:
        return redirect_to_login(request.GET.get("next") or reverse("admin:index"))
    return admin.site.login(request)


class LogoutView(auth_views.LogoutView):
    """Ends the ragweb session, then, after an SSO sign-in, sends the browser to the provider's
    end_session_endpoint (when it has one), which comes back to the login page."""

    def post(self, request, *args, **kwargs):
        id_token = request.session.get("oidc_id_token")
        response = super().post(request, *args, **kwargs)
        if not (id_token and settings.OIDC_ISSUER):
            return response
        try:
            endpoint = provider_metadata().get("end_session_endpoint")
        except DiscoveryError as exc:  # signed out here all the same
            logger.warning("sso: signed out locally only: %s", exc)
            return response
        if not isinstance(endpoint, str) or not endpoint:
            return response
        back = request.build_absolute_uri(resolve_url(settings.LOGOUT_REDIRECT_URL))
        query = urlencode({"id_token_hint": id_token, "client_id": settings.OIDC_RP_CLIENT_ID,
                           "post_logout_redirect_uri": back})
        return HttpResponseRedirect(f"{endpoint}{'&' if '?' in endpoint else '?'}{query}")


class SignInStart(OIDCAuthenticationRequestView):
    """GET /oidc/authenticate/?next=...: off to the provider's authorization endpoint."""

    def __init__(self, **kwargs):  # the base reads the endpoint from settings; it comes from discovery
        View.__init__(self, **kwargs)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID

    def get(self, request):
        if not settings.OIDC_ISSUER:
            raise Http404("single sign-on is not configured")
        try:
            self.metadata = provider_metadata()
        except DiscoveryError as exc:
            return _unreachable(request, exc)
        self.OIDC_OP_AUTH_ENDPOINT = self.metadata["authorization_endpoint"]
        return super().get(request)

    def get_extra_params(self, request) -> dict[str, str]:
        """The scopes, from discovery (added after the base's own "scope", so this one is sent)."""
        return {**super().get_extra_params(request), "scope": requested_scopes(self.metadata)}


class SignInCallback(OIDCAuthenticationCallbackView):
    """GET /oidc/callback/?code=&state=: the provider's answer; signs in or says why not."""

    def get(self, request):
        if not settings.OIDC_ISSUER:
            raise Http404("single sign-on is not configured")
        try:
            return super().get(request)
        except (requests.HTTPError, jwt.InvalidTokenError) as exc:
            # The provider refused the code (used twice, expired) or sent a token that does not check out
            # (expired, from the future: a clock off): a failed sign-in, not an outage.
            logger.warning("sso: sign-in refused: %s", exc)
            return self.login_failure()
        except (DiscoveryError, requests.RequestException) as exc:
            return _unreachable(request, exc)

    def login_failure(self):
        """Cancelled at the provider, refused claims, or an account deactivated here."""
        return _failed(self.request, f"Sign-in with {PROVIDER_LABEL} did not succeed. Try again; "
                                     "if it keeps failing, your account may be disabled here.", status=403)
