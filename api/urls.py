"""/api/ (REST, schema and docs) and /v1/ (OpenAI-compatible) routes; ragweb.urls mounts both."""

from django.contrib.auth.decorators import login_required
from django.urls import path
from drf_spectacular.views import SpectacularSwaggerSplitView

from api.ask import AskView
from api.collections import CollectionDetailView, CollectionListView
from api.documents import (
    DocumentChunksView,
    DocumentDetailView,
    DocumentListView,
    DocumentMoveView,
    DocumentReingestView,
)
from api.feedback import MessageFeedbackView
from api.invitations import InvitationAcceptView, InvitationDeclineView, InvitationListView
from api.openai import ChatCompletionView, ModelDetailView, ModelListView
from api.schema import SchemaView
from api.search import SearchView
from api.sources import SourceDetailView, SourceListView, SourceSyncView, SourceTakeOverView
from api.tokens import TokenDetailView, TokenListView

urlpatterns = [
    path("schema/", SchemaView.as_view(), name="schema"),
    # Signed-in users only, like the API itself (the schema: SPECTACULAR_SETTINGS SERVE_PERMISSIONS).
    # The split view serves Swagger UI's set-up script as a file: the Content-Security-Policy runs no inline script.
    path("docs/", login_required(SpectacularSwaggerSplitView.as_view(
        url_name="schema", template_name="api/swagger_ui.html")), name="docs"),
    path("collections/", CollectionListView.as_view(), name="collections"),
    path("collections/<slug:slug>/", CollectionDetailView.as_view(), name="collection"),
    path("documents/", DocumentListView.as_view(), name="documents"),
    path("documents/<int:pk>/", DocumentDetailView.as_view(), name="document"),
    path("documents/<int:pk>/move/", DocumentMoveView.as_view(), name="document-move"),
    path("documents/<int:pk>/reingest/", DocumentReingestView.as_view(), name="document-reingest"),
    path("documents/<int:pk>/chunks/", DocumentChunksView.as_view(), name="document-chunks"),
    path("invitations/", InvitationListView.as_view(), name="invitations"),
    path("invitations/<int:pk>/accept/", InvitationAcceptView.as_view(), name="invitation-accept"),
    path("invitations/<int:pk>/decline/", InvitationDeclineView.as_view(), name="invitation-decline"),
    path("ask/", AskView.as_view(), name="ask"),
    path("messages/<int:pk>/feedback/", MessageFeedbackView.as_view(), name="message-feedback"),
    path("search/", SearchView.as_view(), name="search"),
    path("sources/", SourceListView.as_view(), name="sources"),
    path("sources/<int:pk>/", SourceDetailView.as_view(), name="source"),
    path("sources/<int:pk>/sync/", SourceSyncView.as_view(), name="source-sync"),
    path("sources/<int:pk>/take-over/", SourceTakeOverView.as_view(), name="source-take-over"),
    path("tokens/", TokenListView.as_view(), name="tokens"),
    path("tokens/<int:pk>/", TokenDetailView.as_view(), name="token"),
]

# OpenAI clients append "/chat/completions" to their base URL: no trailing slashes here.
openai_urlpatterns = [
    path("models", ModelListView.as_view(), name="v1-models"),
    path("models/<path:model>", ModelDetailView.as_view(), name="v1-model"),
    path("chat/completions", ChatCompletionView.as_view(), name="v1-chat-completions"),
]
