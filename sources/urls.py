from django.urls import path

from sources import views

app_name = "sources"
urlpatterns = [
    path("<slug:slug>/", views.source_list, name="list"),
    path("<slug:slug>/add/", views.source_add, name="add"),
    path("source/<int:pk>/sync/", views.source_sync, name="sync"),
    path("source/<int:pk>/delete/", views.source_delete, name="delete"),
    path("source/<int:pk>/take-over/", views.source_take_over, name="take-over"),
]
