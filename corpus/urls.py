from django.urls import path

from corpus import views

app_name = "corpus"
urlpatterns = [
    path("", views.document_list, name="documents"),
    path("upload/", views.document_upload, name="upload"),
    path("<int:pk>/reingest/", views.document_reingest, name="reingest"),
    path("<int:pk>/delete/", views.document_delete, name="delete"),
    path("collections/new/", views.collection_create, name="collection-create"),
    path("collections/<slug:slug>/edit/", views.collection_settings, name="collection"),
    path("collections/<slug:slug>/share/", views.collection_share, name="collection-share"),
    path("collections/<slug:slug>/delete/", views.collection_delete, name="collection-delete"),
    path("invitations/<int:pk>/accept/", views.invitation_answer, {"answer": "accept"}, name="invitation-accept"),
    path("invitations/<int:pk>/decline/", views.invitation_answer, {"answer": "decline"}, name="invitation-decline"),
]
