from __future__ import annotations

from django import forms
from django.conf import settings

from corpus.models import Collection


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file field that accepts several files; each is checked like a single upload."""

    widget = MultipleFileInput

    def clean(self, data, initial=None):
        files = data if isinstance(data, list | tuple) else [data]
        files = [f for f in files if f]
        if not files:
            raise forms.ValidationError("Choose at least one file.")
        cleaned = [super(MultipleFileField, self).clean(f, initial) for f in files]
        for upload in cleaned:
            if upload.size == 0:
                raise forms.ValidationError(f"{upload.name} is empty.")
            if upload.size > settings.MAX_UPLOAD_BYTES:
                limit = settings.MAX_UPLOAD_BYTES // (1024 * 1024)
                raise forms.ValidationError(f"{upload.name} is larger than the {limit} MB limit.")
        return cleaned


class UploadForm(forms.Form):
    collection = forms.ModelChoiceField(queryset=Collection.objects.none(), empty_label=None)
    files = MultipleFileField()

    def __init__(self, *args, collections, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = collections


class CollectionForm(forms.ModelForm):
    class Meta:
        model = Collection
        fields = ["name", "slug", "description", "chunker", "chunk_size", "contextualization", "embedding_mode",
                  "is_public"]
