from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from accounts.signin import ThrottledAdminAuthenticationForm
from api.health import healthz
from api.urls import openai_urlpatterns
from mcp_server.views import McpView
from sso.views import LoginView, LogoutView, admin_login

admin.site.login_form = ThrottledAdminAuthenticationForm

handler404 = "api.errors.not_found"
handler500 = "api.errors.server_error"

urlpatterns = [
    path("admin/login/", admin_login),  # before the admin's own: with SSO, the login page with its button
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    # Browsers (and the admin's pages, which do not link an icon) ask for /favicon.ico: the app's icon.
    path("favicon.ico", RedirectView.as_view(url=static("ragweb/favicon.png"), permanent=True)),
    path("login/", LoginView.as_view(), name="login"),
    path("logout/", LogoutView.as_view(), name="logout"),
    path("oidc/", include("sso.urls")),
    path("password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("api/", include("api.urls")),
    path("v1/", include(openai_urlpatterns)),
    path("mcp", McpView.as_view(), name="mcp"),  # MCP streamable HTTP (mcp_server)
    path("documents/", include("corpus.urls")),
    path("sources/", include("sources.urls")),
    path("account/", include("accounts.urls")),
    path("", include("chat.urls")),
]
