"""The web page's form to add a source: a folder is chosen from the allowed ones (SOURCES_FOLDERS),
never typed; every value is checked by sources.services.clean_new_source, as in the API and CLI."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from sources import services
from sources.folders import folder_choices
from sources.models import MAX_DEPTH_LIMIT, MAX_PAGES_LIMIT, Source


def tags_from_text(text: str) -> list[str]:
    """Comma-separated tags as typed in a form."""
    return [tag.strip() for tag in (text or "").split(",") if tag.strip()]


class SourceForm(forms.Form):
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

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        folders = folder_choices()
        if folders:
            self.fields["path"].choices = [("", "—")] + [(folder, folder) for folder in folders]
        else:
            del self.fields["path"]
            self.fields["kind"].choices = [c for c in Source.Kind.choices if c[0] != Source.Kind.FOLDER]

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            return services.clean_new_source(
                kind=data["kind"], url=data.get("url", ""), path=data.get("path", ""), schedule=data["schedule"],
                max_pages=data["max_pages"], max_depth=data["max_depth"], tags=tags_from_text(data.get("tags")))
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                self.add_error(field if field in self.fields else None, messages)
            return data
