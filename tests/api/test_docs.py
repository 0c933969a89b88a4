"""/api/docs/: the interactive API docs (Swagger UI), for signed-in users, load with every asset
served by ragweb itself."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

_ASSET = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")


def test_docs_page_serves_its_assets_locally(client, user):
    client.force_login(user)
    response = client.get("/api/docs/")

    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assets = _ASSET.findall(html)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets) and any(a.endswith(".css") for a in assets)
    off_site = [a for a in assets if re.match(r"(?i)^(?:[a-z][a-z0-9+.-]*:)?//", a)]
    assert off_site == []
    assert not re.search(r"https?://", html), "the page names an off-site URL"
    assert not re.search(r"<script>|<style>", html), "inline script or style: the Content-Security-Policy refuses them"
    script = client.get("/api/docs/", {"script": ""}).content.decode()  # Swagger UI's set-up, as a file
    assert 'url: "/api/schema/"' in script
    for asset in assets:
        served = client.get(asset)
        assert served.status_code == 200, asset
        assert b"".join(served.streaming_content if served.streaming else [served.content])


def test_docs_and_schema_need_a_login(client, user):
    assert client.get("/api/docs/")["Location"] == "/login/?next=/api/docs/"
    assert client.get("/api/schema/").status_code in (401, 403)
    client.force_login(user)
    response = client.get("/api/schema/")
    assert response.status_code == 200 and "/v1/chat/completions" in response.json()["paths"]


def test_unknown_api_urls_are_json_404s(client):
    response = client.get("/api/nothing-here/")
    assert response.status_code == 404 and response.json() == {"detail": "No API endpoint /api/nothing-here/; "
                                                                          "see /api/docs/."}
    response = client.post("/v1/completions", {}, content_type="application/json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "unknown_url"
    assert client.get("/no-such-page/").status_code == 404
    assert client.get("/no-such-page/")["Content-Type"].startswith("text/html")
