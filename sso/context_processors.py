def sign_in(request) -> dict:
    """For the login page and the top bar: the provider's button label ("" without OIDC) and
    whether the username/password form is offered."""
    from django.conf import settings

    return {"sso_provider": settings.OIDC_PROVIDER_NAME if settings.OIDC_ISSUER else "",
            "local_login": settings.LOCAL_LOGIN}
