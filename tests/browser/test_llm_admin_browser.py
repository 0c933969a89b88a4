"""The admin's LLM settings in a real browser: a superuser picks a model the endpoint lists, presses Test
(one real request, the outcome shown), saves, and the key is never put back into the page."""

from __future__ import annotations

import pytest

from corpus.models import LLMSettings
from tests.browser.support import in_db_thread, log_in
from tests.chat.fake_openai import ENDPOINT_KEY as KEY

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

def test_a_superuser_tests_then_saves_the_llm_and_the_key_stays_hidden(live_server, llm_endpoint, django_user_model,
                                                                       chromium):
    in_db_thread(lambda: django_user_model.objects.create_user("sam", password="sam-password-1", is_staff=True,
                                                               is_superuser=True))
    page = log_in(chromium, live_server.url, "sam", "sam-password-1")
    page.goto(f"{live_server.url}/admin/corpus/llmsettings/")
    assert "No LLM: answers are quoted from the sources" in page.locator("#llm-in-effect").inner_text()

    page.fill("input[name=base_url]", "http://llm-server.invalid/v1")
    page.fill("input[name=model]", "small-model")
    page.click("input[name=_test]")
    assert page.locator("ul.messagelist").inner_text().strip().startswith(
        "Unknown host: the name “llm-server.invalid” could not be resolved")

    page.fill("input[name=base_url]", llm_endpoint.base_url)
    page.fill("input[name=new_api_key]", "sk-wrong")
    page.click("input[name=_test]")
    assert page.locator("ul.messagelist").inner_text().strip() == \
        "Bad key: the endpoint refused the API key (HTTP 401)."

    page.fill("input[name=new_api_key]", KEY)
    page.click("input[name=_test]")
    assert page.locator("ul.messagelist").inner_text().startswith("It works: small-model answered in ")
    assert not in_db_thread(lambda: LLMSettings.objects.exists())  # a test saves nothing

    page.click("input[name=_save]")
    page.wait_for_url(f"{live_server.url}/admin/corpus/llmsettings/")
    assert "Saved the LLM settings." in page.locator("ul.messagelist").inner_text()
    assert page.locator("#llm-key-state").inner_text() == "set"
    assert page.input_value("input[name=new_api_key]") == "" and KEY not in page.content()
    # The endpoint's models are offered in the model field's list.
    options = page.eval_on_selector_all("#llm-models option", "els => els.map(e => e.value)")
    assert options == ["large-model", "small-model"]
    assert "Answers are written by small-model" in page.locator("#llm-in-effect").inner_text()
    assert in_db_thread(lambda: LLMSettings.objects.get().model) == "small-model"
