"""The admin page where superusers choose the answering LLM: base URL, model (from the endpoint's
/models when it lists them), API key (write only), and a Test button that sends one real request
(audited). The stored key goes only to the URL it was saved with (corpus.llm_settings).

The environment's LLM_BASE_URL wins when set: the page then shows the environment's LLM in a read-only
form, without Save or Test, and refuses a POST (403) without saving, testing or calling the endpoint.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse

from corpus import llm, llm_secret, permissions
from corpus.llm_settings import (
    CREDENTIALS_REFUSED,
    has_credentials,
    llm_models,
    llm_settings_get,
    llm_settings_save,
    llm_settings_test,
)
from corpus.models import LLMSettings

ENVIRONMENT_LOCKED = ("LLM_BASE_URL is set in the environment: the LLM is configured there, and this page is "
                      "read-only. Remove LLM_BASE_URL from the environment to choose the LLM here.")
NEW_URL_NEEDS_KEY = ("The base URL changed: type the API key again (the stored key is sent only to the URL it "
                     "was saved with), or tick “Remove the stored key”.")


class LLMSettingsForm(forms.Form):
    base_url = forms.URLField(label="Base URL", max_length=500, required=False, assume_scheme="https",
                              help_text="An OpenAI-compatible API, e.g. https://api.openai.com/v1 or "
                                        "http://127.0.0.1:8080/v1 (llama.cpp, vLLM, Ollama). Blank: no LLM.")
    model = forms.CharField(max_length=200, required=False, widget=forms.TextInput(
        attrs={"list": "llm-models", "autocomplete": "off", "size": 40}),
        help_text="Pick one the endpoint lists, or type its name.")
    new_api_key = forms.CharField(label="API key", max_length=1000, required=False,
                                  widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}))
    clear_api_key = forms.BooleanField(label="Remove the stored key", required=False)

    def clean_base_url(self) -> str:
        url = self.cleaned_data["base_url"]
        if has_credentials(url):
            raise forms.ValidationError(CREDENTIALS_REFUSED)
        return url

    def clean(self):
        data = super().clean()
        if bool(data.get("base_url")) != bool((data.get("model") or "").strip()):
            raise forms.ValidationError("Give both the base URL and the model, or neither (answers are then "
                                        "quoted from the sources).")
        return data


@admin.register(LLMSettings)
class LLMSettingsAdmin(admin.ModelAdmin):
    """One page (the list's URL) for the single row; add, change and delete go through it."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return permissions.can_configure_llm(request.user)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return redirect("admin:corpus_llmsettings_changelist")

    def changelist_view(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        if not self.has_change_permission(request):
            return self.admin_site.login(request) if not request.user.is_authenticated else HttpResponse(status=403)
        row = llm_settings_get()
        environment = llm.environment_config()
        if environment is not None:
            return self._locked_view(request, row, environment)
        stored_key = llm_secret.decrypt(row.api_key_encrypted)
        testing = request.method == "POST" and "_test" in request.POST
        form = LLMSettingsForm(request.POST or None, initial={"base_url": row.base_url, "model": row.model})
        if testing:
            form.fields["new_api_key"].widget.render_value = True  # keep what was just typed (not saved)
        status = 200
        if request.method == "POST":
            if not form.is_valid():
                status = 400
            elif testing:
                data = form.cleaned_data
                if not data["base_url"]:
                    form.add_error("base_url", "Give a base URL and a model to test.")
                    status = 400
                else:
                    result = llm_settings_test(base_url=data["base_url"], model=data["model"],
                                               typed_key=data["new_api_key"], request=request)
                    self.message_user(request, result.message, level=messages.SUCCESS if result.ok else messages.ERROR)
            elif (form.cleaned_data["base_url"] and row.base_url and form.cleaned_data["base_url"] != row.base_url
                  and stored_key and not form.cleaned_data["new_api_key"] and not form.cleaned_data["clear_api_key"]):
                form.add_error("new_api_key", NEW_URL_NEEDS_KEY)
                status = 400
            else:
                data = form.cleaned_data
                llm_settings_save(base_url=data["base_url"], model=data["model"], new_api_key=data["new_api_key"],
                                  clear_api_key=data["clear_api_key"], request=request)
                self.message_user(request, "Saved the LLM settings.", level=messages.SUCCESS)
                return redirect("admin:corpus_llmsettings_changelist")
        valid = form.is_bound and form.is_valid()
        shown_url = (form.cleaned_data.get("base_url") if valid else row.base_url) or ""
        typed_key = form.cleaned_data.get("new_api_key", "") if valid and testing else ""
        context = {
            **self.admin_site.each_context(request), "title": "LLM settings", "opts": self.opts, "form": form,
            "key_state": "set" if stored_key else ("set, but unreadable" if stored_key is None else "not set"),
            "environment": None, "effective": llm.current(), "row": row,
            "models": llm_models(base_url=shown_url, typed_key=typed_key),
        }
        return TemplateResponse(request, "admin/corpus/llmsettings/settings.html", context, status=status)

    def _locked_view(self, request: HttpRequest, row: LLMSettings, environment: llm.LLMConfig) -> HttpResponse:
        """The page while the environment sets the LLM: its base URL and model in disabled fields, no
        buttons; a POST (a form from before the lock, or crafted) changes and tests nothing: 403."""
        form = LLMSettingsForm(initial={"base_url": environment.base_url, "model": environment.model})
        for field in form.fields.values():
            field.disabled = True
        status = 200
        if request.method == "POST":
            self.message_user(request, ENVIRONMENT_LOCKED, level=messages.ERROR)
            status = 403
        context = {
            **self.admin_site.each_context(request), "title": "LLM settings", "opts": self.opts, "form": form,
            "key_state": "set" if environment.api_key else "not set",
            "environment": environment, "effective": environment, "row": row, "models": [],
        }
        return TemplateResponse(request, "admin/corpus/llmsettings/settings.html", context, status=status)
