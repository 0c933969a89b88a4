"""Sign-in against a real OpenID provider (oidc-provider on node, tests/sso/provider.py), driven
without a browser: ragweb through Django's test client, the provider's pages through requests."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.auth.models import Group, User

from corpus.models import Collection
from corpus.permissions import readable_collections
from sso.models import Identity, ManagedGroup
from tests.sso import provider as idp
from tests.sso.flow import sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def sso(settings, oidc_provider):
    idp.use(settings, oidc_provider)
    return oidc_provider


def groups_of(user: User) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_it_makes_the_user_on_first_sign_in_with_the_claims_groups(client, sso):
    sso.set_account("sub-ada", preferred_username="ada", email="ada@example.org", email_verified=True,
                    given_name="Ada", groups=["engineering", "sales"])

    response = sign_in(client, requests.Session(), login="sub-ada", next_path="/documents/")

    assert response.status_code == 302 and response["Location"] == "/documents/"
    user = User.objects.get(sso_identity__subject="sub-ada", sso_identity__issuer=sso.issuer)
    assert (user.username, user.email, user.first_name) == ("ada", "ada@example.org", "Ada")
    assert groups_of(user) == {"engineering", "sales"}
    assert not user.has_usable_password() and not user.is_staff and not user.is_superuser
    assert set(ManagedGroup.objects.values_list("group__name", flat=True)) == {"engineering", "sales"}
    chat = client.get("/")
    assert chat.status_code == 200  # signed in: the chat, not the login page
    assert b'href="/password/"' not in chat.content  # no password here to change


def test_a_group_removed_at_the_provider_is_gone_at_next_sign_in_with_its_collections(client, sso):
    owner = User.objects.create_user("owner", password="owner-password-1")
    sales_docs = Collection.objects.create(slug="sales-docs", name="Sales docs", owner=owner)
    eng_docs = Collection.objects.create(slug="eng-docs", name="Engineering docs", owner=owner)
    sales_docs.reader_groups.add(Group.objects.create(name="sales"))  # made by staff before anyone signed in
    eng_docs.reader_groups.add(Group.objects.create(name="engineering"))
    sso.set_account("sub-ada", preferred_username="ada", groups=["engineering", "sales"])
    sign_in(client, requests.Session(), login="sub-ada")
    user = User.objects.get(username="ada")
    book_club = Group.objects.create(name="book-club")  # staff add her by hand: not the provider's
    user.groups.add(book_club)
    assert set(readable_collections(user).values_list("slug", flat=True)) == {"sales-docs", "eng-docs"}

    sso.set_account("sub-ada", preferred_username="ada", groups=["engineering"])
    client.post("/logout/")
    response = sign_in(client, requests.Session(), login="sub-ada")

    assert response.status_code == 302
    assert User.objects.filter(username__startswith="ada").count() == 1  # the same account again
    assert groups_of(user) == {"engineering", "book-club"}
    assert set(readable_collections(user).values_list("slug", flat=True)) == {"eng-docs"}


def test_a_local_account_with_the_same_username_or_email_is_never_taken_over(client, sso):
    local = User.objects.create_user("ada", email="ada@example.org", password="local-password-1")
    sso.set_account("sub-ada", preferred_username="ada", email="ada@example.org", groups=["sales"])

    sign_in(client, requests.Session(), login="sub-ada")

    identity = Identity.objects.get(subject="sub-ada")
    assert identity.user.username == "ada-2" and identity.user.pk != local.pk
    assert groups_of(local) == set() and local.check_password("local-password-1")


def test_sign_out_ends_the_session_here_and_at_the_provider(client, sso):
    sso.set_account("sub-ada", preferred_username="ada")
    sign_in(client, requests.Session(), login="sub-ada")

    response = client.post("/logout/")

    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(f"{sso.issuer}/session/end?")
    assert "id_token_hint=" in location and "post_logout_redirect_uri=http%3A%2F%2Ftestserver%2Flogin%2F" in location
    assert client.get("/").status_code == 302  # no longer signed in here


def test_a_callback_with_an_unknown_state_is_refused(client, sso):
    client.get("/oidc/authenticate/")  # a sign-in started: the session holds its own state
    assert client.get("/oidc/callback/?code=stolen&state=not-ours").status_code == 400
    assert not User.objects.exclude(username="owner").exists()


def test_a_code_the_provider_refuses_is_a_failed_sign_in_not_an_outage(client, sso):
    start = client.get("/oidc/authenticate/")
    state = parse_qs(urlsplit(start["Location"]).query)["state"][0]
    response = client.get(f"/oidc/callback/?code=made-up&state={state}")
    assert response.status_code == 403
    assert b"Sign-in with single sign-on did not succeed" in response.content


def test_a_sign_in_cancelled_at_the_provider_says_so(client, sso):
    client.get("/oidc/authenticate/")
    response = client.get("/oidc/callback/?error=access_denied&state=whatever")
    assert response.status_code == 403
    assert b"Sign-in with single sign-on did not succeed" in response.content


def test_a_deactivated_user_cannot_sign_in_through_the_provider(client, sso):
    sso.set_account("sub-ada", preferred_username="ada")
    sign_in(client, requests.Session(), login="sub-ada")
    client.post("/logout/")
    User.objects.filter(username="ada").update(is_active=False)

    response = sign_in(client, requests.Session(), login="sub-ada")

    assert response.status_code == 403
    assert client.get("/").status_code == 302


def test_staff_comes_from_the_claim_only_when_oidc_staff_group_is_set(client, sso, settings):
    sso.set_account("sub-ada", preferred_username="ada", groups=["ragweb-admins"])
    sign_in(client, requests.Session(), login="sub-ada")
    assert not User.objects.get(username="ada").is_staff  # OIDC_STAFF_GROUP unset: the claim decides nothing

    settings.OIDC_STAFF_GROUP = "ragweb-admins"
    client.post("/logout/")
    sign_in(client, requests.Session(), login="sub-ada")
    user = User.objects.get(username="ada")
    assert user.is_staff and not user.is_superuser

    sso.set_account("sub-ada", preferred_username="ada", groups=[])
    client.post("/logout/")
    sign_in(client, requests.Session(), login="sub-ada")
    assert not User.objects.get(username="ada").is_staff


def test_an_unreachable_provider_is_a_clear_503_not_a_500(client, settings):
    idp.use(settings, idp.Provider(f"http://127.0.0.1:{idp.free_port()}", None, None))
    response = client.get("/oidc/authenticate/")
    assert response.status_code == 503
    assert b"Single sign-on cannot be reached just now" in response.content


def test_sign_out_with_the_provider_down_still_ends_the_session_here(client, sso, settings):
    from sso import discovery

    sso.set_account("sub-ada", preferred_username="ada")
    sign_in(client, requests.Session(), login="sub-ada")
    idp.stop(sso)
    discovery.forget()

    response = client.post("/logout/")

    assert response.status_code == 302 and response["Location"] == "/login/"
    assert client.get("/").status_code == 302


def test_the_scopes_asked_for_come_from_the_providers_discovery_document(client, sso):
    response = client.get("/oidc/authenticate/")
    assert response.status_code == 302
    query = parse_qs(urlsplit(response["Location"]).query)
    # oidc-provider lists "groups" in scopes_supported (tests/sso/provider/provider.mjs): it is asked for.
    assert query["scope"] == ["openid email profile groups"]


@pytest.mark.parametrize("algorithm", ["HS256", "none"])
def test_an_id_token_not_signed_with_the_providers_keys_is_refused(sso, algorithm):
    import jwt
    from django.core.exceptions import SuspiciousOperation

    from sso.backend import OidcBackend

    claims = {"iss": sso.issuer, "aud": idp.CLIENT_ID, "sub": "sub-ada", "nonce": "n"}
    # HS256 with the client secret is what a confused verifier would accept: the discovery list decides.
    token = jwt.encode(claims, idp.CLIENT_SECRET if algorithm == "HS256" else None, algorithm=algorithm)
    with pytest.raises(SuspiciousOperation, match=f"ID token signed with '{algorithm}'; accepted: RS256"):
        OidcBackend().verify_token(token, nonce="n")
