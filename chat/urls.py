from django.urls import path

from chat import answer_views, conversation_views, document_views, views

app_name = "chat"
urlpatterns = [
    path("", views.index, name="index"),
    path("c/<int:pk>/", views.conversation, name="conversation"),
    path("c/<int:pk>/rename/", conversation_views.rename, name="rename"),
    path("c/<int:pk>/delete/", conversation_views.delete, name="delete"),
    path("c/<int:pk>/export.md", conversation_views.export, name="export"),
    path("c/<int:pk>/share/", conversation_views.share, name="share"),
    path("c/<int:pk>/unshare/", conversation_views.unshare, name="unshare"),
    path("shared/<str:token>/", conversation_views.shared, name="shared"),
    path("ask/", views.ask, name="ask"),
    path("messages/<int:pk>/stop/", views.stop, name="stop"),
    path("messages/<int:pk>/feedback/", answer_views.rate, name="feedback"),
    path("messages/<int:pk>/sources/<int:n>/", views.passage, name="passage"),
    path("passages/<int:pk>/", document_views.document_passage, name="document-passage"),
]
