from django.urls import path

from sso import views

# Names mozilla-django-oidc reverses (the callback's is the redirect URI sent to the provider).
urlpatterns = [
    path("authenticate/", views.SignInStart.as_view(), name="oidc_authentication_init"),
    path("callback/", views.SignInCallback.as_view(), name="oidc_authentication_callback"),
]
