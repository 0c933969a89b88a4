"""Forms of the documents page: upload, filters, a collection's fields and its sharing.

The forms only parse input; the rules live elsewhere: which files are accepted in
corpus.uploads (applied per file by services.document_upload, so one bad file never blocks the
others), who may do what in corpus.permissions, and a collection's validity in
services.collection_create / collection_update.
"""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from corpus import llm, permissions, selectors, services, sharing
from corpus.models import CHUNK_SIZE_MAX, CHUNK_SIZE_MIN, Collection, Document
from corpus.uploads import SUPPORTED_HELP, accept_attribute


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files, returned as a list. Each file is judged later, on its own, by the upload rule."""

    widget = MultipleFileInput

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_empty_file", True)  # an empty file is refused by name, with the others kept
        super().__init__(**kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, list | tuple) else [data]
        files = [f for f in files if f]
        if not files:
            raise forms.ValidationError("Choose at least one file.", code="required")
        return [super(MultipleFileField, self).clean(f, initial) for f in files]


class UploadForm(forms.Form):
    """Files and the collection they go to. The choice is limited to `collections` (those the
    user may write to); with several and no `initial` collection the user must pick one."""

    collection = forms.ModelChoiceField(queryset=Collection.objects.none(), to_field_name="slug",
                                        empty_label="Choose a collection…",
                                        error_messages={"invalid_choice": "Choose a collection you may add to."})
    files = MultipleFileField(help_text=SUPPORTED_HELP)

    def __init__(self, *args, collections, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["collection"]
        field.queryset = collections
        field.widget.attrs["required"] = True
        self.fields["files"].widget.attrs["accept"] = accept_attribute()


class DocumentFilterForm(forms.Form):
    """The documents page's filters; invalid values are dropped rather than refused."""

    collection = forms.SlugField(required=False)
    status = forms.ChoiceField(choices=[("", "Any status"), *Document.Status.choices], required=False)
    q = forms.CharField(required=False, max_length=200, label="Search")

    page = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    def filters(self) -> dict:
        """The valid, non-empty filters (and page), for links and redirects that keep them."""
        self.is_valid()
        return {name: value for name, value in self.cleaned_data.items() if value}


class CollectionForm(forms.ModelForm):
    """A collection's name and ingestion settings. The slug may be left empty: it is then derived
    from the name (the page's script does the same as you type)."""

    chunk_size = forms.IntegerField(min_value=CHUNK_SIZE_MIN, max_value=CHUNK_SIZE_MAX,
                                    initial=200, help_text="Target chunk size in model tokens.")

    class Meta:
        model = Collection
        fields = ["name", "slug", "description", "chunker", "chunk_size", "chunk_overlap", "contextualization",
                  "embedding_mode", "is_public"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        if not permissions.can_publish(user) and not self.instance.is_public:
            # Making it public is a staff decision (corpus.permissions); a disabled field keeps its value.
            public = self.fields["is_public"]
            public.disabled = True
            public.help_text = "Only staff may make a collection public; share it with readers instead."
        if not llm.llm_configured():  # the LLM modes would quietly fall back (corpus.ingest.contextualize)
            self.fields["contextualization"].help_text = (
                "No LLM is configured: the two LLM options use the contextual chunk header until one is.")
        slug = self.fields["slug"]
        slug.required = False
        slug.help_text = "Used in links and the API. Left empty, it is made from the name."
        if self.instance.pk is None:  # a new collection's slug follows its name; an existing one's stays
            self.fields["name"].widget.attrs["data-slug-source"] = "id_slug"

    def clean_slug(self) -> str:
        slug = self.cleaned_data.get("slug") or services.slug_from_name(self.cleaned_data.get("name") or "")
        if not slug:
            raise ValidationError("Give a slug: the name has no letters to make one from.", code="required")
        return slug


class UsernamesField(forms.CharField):
    """Users by username, separated by commas or spaces: cleans to the names typed (blank entries
    and repeats dropped); corpus.sharing.share_targets turns them into users. Shows a list of users
    as their names, so no widget ever lists every account (the admin's default one did, to any staff
    member)."""

    widget = forms.Textarea(attrs={"rows": 2})
    name_attribute = "username"
    separators = r"[\s,]+"  # a username has neither

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, (list, tuple, QuerySet)):
            return ", ".join(sorted(getattr(item, self.name_attribute, str(item)) for item in value))
        return value

    def clean(self, value) -> list[str]:
        return selectors.names_given(re.split(self.separators, super().clean(value) or ""))


class GroupNamesField(UsernamesField):
    """Groups by name, the same way but separated by commas or new lines only (a group's name may
    have spaces: "Support team")."""

    name_attribute = "name"
    separators = r"[,\n]+"


def clean_shares(form: forms.Form, *, collection: Collection | None, request) -> None:
    """Replace the names in `form.cleaned_data`'s share fields by the people and groups
    (corpus.sharing.share_targets), or add its errors to the form: a field's on the field, a
    throttle's or a cap's on the form when the field is not there."""
    names = {field: form.cleaned_data[field] for field in sharing.SHARE_FIELDS if field in form.cleaned_data}
    try:
        form.cleaned_data.update(sharing.share_targets(collection=collection, request=request, names=names))
    except ValidationError as exc:
        if not hasattr(exc, "error_dict"):
            form.add_error(None, exc)
            return
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)


class ShareForm(forms.Form):
    """Who may read and who may also change the documents of a collection: users by username,
    groups by name. Its cleaned_data are corpus.sharing.collection_share's arguments."""

    readers = UsernamesField(help_text="Usernames, separated by commas or spaces. They may search and read. "
                                       "Someone new is invited: it is shared with them once they accept.")
    editors = UsernamesField(help_text="They may also upload, re-ingest, move and delete documents.")
    reader_groups = GroupNamesField(label="Reader groups",
                                    help_text="Group names, separated by commas. Every member may search and "
                                              "read.")
    editor_groups = GroupNamesField(label="Editor groups", help_text="Every member may also change documents. "
                                                                     "Only groups you belong to may be added.")

    def __init__(self, *args, collection: Collection | None = None, request=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.collection, self.request = collection, request

    def clean(self):
        data = super().clean()
        if not self.errors:
            clean_shares(self, collection=self.collection, request=self.request)
        return data

    @classmethod
    def for_collection(cls, collection: Collection) -> ShareForm:
        """The form as the collection is shared now, invited people included (saving keeps them)."""
        return cls(initial=sharing.shares_with_invitations(collection))
