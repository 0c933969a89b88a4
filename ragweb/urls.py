from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from api.health import healthz
from api.urls import openai_urlpatterns

handler404 = "api.errors.not_found"
handler500 = "api.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("api.urls")),
    path("v1/", include(openai_urlpatterns)),
    path("documents/", include("corpus.urls")),
    path("account/", include("accounts.urls")),
    path("", include("chat.urls")),
]
