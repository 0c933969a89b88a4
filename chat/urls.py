from django.urls import path

from chat import views

app_name = "chat"
urlpatterns = [
    path("", views.index, name="index"),
    path("c/<int:pk>/", views.conversation, name="conversation"),
    path("ask/", views.ask, name="ask"),
    path("messages/<int:pk>/stop/", views.stop, name="stop"),
    path("messages/<int:pk>/sources/<int:n>/", views.passage, name="passage"),
]
