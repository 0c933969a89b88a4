from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from api.ask import AskView
from api.documents import DocumentDetailView, DocumentListView, DocumentReingestView
from api.search import SearchView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("documents/", DocumentListView.as_view(), name="documents"),
    path("documents/<int:pk>/", DocumentDetailView.as_view(), name="document"),
    path("documents/<int:pk>/reingest/", DocumentReingestView.as_view(), name="document-reingest"),
    path("ask/", AskView.as_view(), name="ask"),
    path("search/", SearchView.as_view(), name="search"),
]
