"""The web page's form to add a source: a folder is chosen from the allowed ones (SOURCES_FOLDERS),
never typed; every value is checked by sources.services.clean_new_source, as in the API and CLI.

Each kind has its own fields (FIELDS_OF_KIND; kind, schedule and tags are common). Their rows carry
the classes `of-kind for-<kind>...`, so the stylesheet shows only the chosen kind's (with CSS
alone: no JS needed); the fields of the other kinds are ignored on submit, so a value or an error
left in a hidden field never blocks or changes the source."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.forms.boundfield import BoundField

from sources import services
from sources.folders import FOLDERS_FOR_STAFF, allowed_roots, folder_choices, may_add_folder
from sources.models import MAX_DEPTH_LIMIT, MAX_PAGES_LIMIT, Source


def tags_from_text(text: str) -> list[str]:
    """Comma-separated tags as typed in a form."""
    return [tag.strip() for tag in (text or "").split(",") if tag.strip()]


FIELDS_OF_KIND = {
    Source.Kind.URL: ("url",),
    Source.Kind.SITE: ("url", "max_pages", "max_depth"),
    Source.Kind.FOLDER: ("path", "max_pages"),  # max_pages: files
}
KIND_SPECIFIC = {name for names in FIELDS_OF_KIND.values() for name in names}


class KindField(BoundField):
    """A field's row names the kinds it belongs to (css_classes is what {{ form.as_p }} puts on <p>)."""

    def css_classes(self, extra_classes=None):
        if self.name in KIND_SPECIFIC:
            kinds = [f"for-{kind}" for kind, names in FIELDS_OF_KIND.items() if self.name in names]
            extra_classes = " ".join(["of-kind", *kinds, extra_classes or ""])
        return super().css_classes(extra_classes)


class SourceForm(forms.Form):
    bound_field_class = KindField
    kind = forms.ChoiceField(choices=Source.Kind.choices, initial=Source.Kind.URL)
    url = forms.CharField(label="URL", required=False, max_length=2000,
                          help_text="A page, a site's start page or its sitemap.",
                          widget=forms.TextInput(attrs={"placeholder": "https://docs.example.org/guide/",
                                                        "inputmode": "url"}))
    path = forms.ChoiceField(label="Folder", required=False,
                             help_text="Server folders the operator allows (SOURCES_FOLDERS).")
    schedule = forms.ChoiceField(choices=Source.Schedule.choices, initial=Source.Schedule.DAILY)
    max_pages = forms.IntegerField(label="Max pages", initial=100, min_value=1, max_value=MAX_PAGES_LIMIT)
    max_depth = forms.IntegerField(label="Max depth", initial=3, min_value=0, max_value=MAX_DEPTH_LIMIT,
                                   help_text="Links followed from the start page (sites).")
    tags = forms.CharField(required=False, help_text="Given to every document; separated by commas.")

    def __init__(self, *args, collection=None, user=None, **kwargs):
        """`collection`: the one the source is for (a location it already has is refused, named);
        `user`: who adds it (folders only for those sources.folders.may_add_folder allows)."""
        super().__init__(*args, **kwargs)
        self.collection = collection
        folders = folder_choices() if may_add_folder(user) else []
        if folders:
            self.fields["path"].choices = [("", "—")] + [(folder, folder) for folder in folders]
        else:
            del self.fields["path"]
            self.fields["kind"].choices = [c for c in Source.Kind.choices if c[0] != Source.Kind.FOLDER]
            # Said, so that a missing "Server folder" kind is not a mystery to the person adding a source.
            self.fields["kind"].help_text = (FOLDERS_FOR_STAFF if allowed_roots() else
                                             "Server folders are off: the operator lists them in SOURCES_FOLDERS.")

    def clean(self):
        data = super().clean()
        kind = data.get("kind")
        for name in KIND_SPECIFIC - set(FIELDS_OF_KIND.get(kind, KIND_SPECIFIC)):
            if name in self.fields:  # another kind's field, hidden: its value and its errors do not count
                self._errors.pop(name, None)
                data[name] = self.fields[name].initial if self.fields[name].initial is not None else ""
        if self.errors:
            return data
        try:
            return services.clean_new_source(
                kind=data["kind"], url=data.get("url", ""), path=data.get("path", ""), schedule=data["schedule"],
                max_pages=data["max_pages"], max_depth=data["max_depth"], tags=tags_from_text(data.get("tags")),
                collection=self.collection)
        except ValidationError as exc:
            self.add_service_error(exc)
            return data

    def add_service_error(self, exc: ValidationError) -> None:
        """sources.services' ValidationError shown on the form: per field, or for the form as a whole (a quota)."""
        for field, messages in (exc.error_dict if hasattr(exc, "error_dict") else {None: exc.error_list}).items():
            self.add_error(field if field in self.fields else None, messages)
