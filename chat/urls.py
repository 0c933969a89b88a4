from django.urls import path

from chat import conversation_views, views

app_name = "chat"
urlpatterns = [
    path("", views.index, name="index"),
    path("c/<int:pk>/", views.conversation, name="conversation"),
    path("c/<int:pk>/rename/", conversation_views.rename, name="rename"),
    path("c/<int:pk>/delete/", conversation_views.delete, name="delete"),
    path("c/<int:pk>/export.md", conversation_views.export, name="export"),
    path("ask/", views.ask, name="ask"),
    path("messages/<int:pk>/stop/", views.stop, name="stop"),
    path("messages/<int:pk>/sources/<int:n>/", views.passage, name="passage"),
]
