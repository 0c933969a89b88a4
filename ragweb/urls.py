from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from accounts.signin import ThrottledAdminAuthenticationForm, ThrottledAuthenticationForm
from api.health import healthz
from api.urls import openai_urlpatterns

admin.site.login_form = ThrottledAdminAuthenticationForm

handler404 = "api.errors.not_found"
handler500 = "api.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("api/", include("api.urls")),
    path("v1/", include(openai_urlpatterns)),
    path("documents/", include("corpus.urls")),
    path("sources/", include("sources.urls")),
    path("account/", include("accounts.urls")),
    path("", include("chat.urls")),
]
