# What the sign-in button and messages call the provider: "Sign in with single sign-on". Whoever runs the
# provider tells their users what it is; its name is not in the discovery document.
PROVIDER_LABEL = "single sign-on"


def sign_in(request) -> dict:
    """For the login page and the top bar: the provider's button label ("" without OIDC) and
    whether the username/password form is offered."""
    from django.conf import settings

    return {"sso_provider": PROVIDER_LABEL if settings.OIDC_ISSUER else "",
            "local_login": settings.LOCAL_LOGIN}
