"""The app's URLs plus one view that fails: for the 500 page's test."""

from django.urls import path

from ragweb.urls import handler404, handler500  # noqa: F401  (the handlers)
from ragweb.urls import urlpatterns as app_urlpatterns


def boom(request):
    raise RuntimeError("boom")


urlpatterns = [path("boom/", boom), *app_urlpatterns]
