"""Signing in through the real test provider without a browser: Django's test client for ragweb,
a requests session (the provider's cookies) for the provider's login and consent pages."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import requests

APP = "http://testserver"


def through_provider(session: requests.Session, url: str, *, login: str) -> str:
    """Follow the provider from its authorization URL, filling its login and consent forms, until it
    sends the browser back to ragweb; returns that URL (the callback with code and state)."""
    for _ in range(20):
        if url.startswith(APP):
            return url
        response = session.get(url, allow_redirects=False, timeout=10)
        if response.is_redirect:
            url = urljoin(url, response.headers["Location"])
            continue
        assert response.status_code == 200, response.text
        action = urljoin(url, re.search(r'<form[^>]*action="([^"]+)"', response.text).group(1))
        prompt = re.search(r'name="prompt" value="(\w+)"', response.text).group(1)
        data = {"prompt": prompt, "login": login, "password": "any"} if prompt == "login" else {"prompt": prompt}
        response = session.post(action, data=data, allow_redirects=False, timeout=10)
        assert response.is_redirect, response.text
        url = urljoin(action, response.headers["Location"])
    raise AssertionError("the provider never sent the browser back")


def sign_in(client, session: requests.Session, *, login: str, next_path: str = "/"):
    """The whole round trip; returns ragweb's answer to the callback."""
    start = client.get(f"/oidc/authenticate/?next={next_path}")
    assert start.status_code == 302, start.content
    back = through_provider(session, start["Location"], login=login)
    parts = urlsplit(back)
    return client.get(f"{parts.path}?{parts.query}")
