"""A signed-in test client, for the tests that use the web pages."""

from __future__ import annotations

from django.test import Client


def signed_in(user) -> Client:
    web = Client()
    web.force_login(user)
    return web
