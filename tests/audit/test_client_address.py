"""The audit trail's client address behind a reverse proxy: X-Forwarded-For is read only when the
operator says how many proxies append to it (TRUSTED_PROXY_COUNT); otherwise it is the client's to
write and REMOTE_ADDR (the proxy, or the client itself) is what is recorded."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory

from audit.models import Action, AuditEvent
from audit.services import client_address

# What nginx passes on when a client sent its own "X-Forwarded-For: 6.6.6.6".
BEHIND_NGINX = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 203.0.113.7"}


@pytest.mark.parametrize(("proxies", "meta", "address"), [
    (0, BEHIND_NGINX, "10.0.0.2"),  # not configured: the header is ignored
    (1, BEHIND_NGINX, "203.0.113.7"),  # the address nginx saw, not the one the client wrote
    (2, BEHIND_NGINX, "6.6.6.6"),
    (1, {"REMOTE_ADDR": "10.0.0.2"}, "10.0.0.2"),  # no header (a health check from inside)
    (1, {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "not-an-address"}, None),
    (1, {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": " 2001:db8::7 "}, "2001:db8::7"),
])
def test_the_client_address_reads_x_forwarded_for_only_behind_trusted_proxies(settings, proxies, meta, address):
    settings.TRUSTED_PROXY_COUNT = proxies
    assert client_address(RequestFactory().get("/", **meta)) == address


@pytest.mark.django_db
def test_a_failed_sign_in_behind_the_proxy_records_the_clients_address(settings, django_user_model):
    settings.TRUSTED_PROXY_COUNT = 1
    django_user_model.objects.create_user("mallory", password="mallory-password-1")
    Client(**BEHIND_NGINX).post("/login/", {"username": "mallory", "password": "wrong-password-1"})
    event = AuditEvent.objects.get(action=Action.SIGN_IN_FAILED)
    assert (event.target_label, event.ip) == ("mallory", "203.0.113.7")
