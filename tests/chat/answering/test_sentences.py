"""The one sentence splitter (chat.answering.text) that quotes, supporting spans and the grounding
pass share: abbreviations, initials and numbers do not end a sentence."""

from chat.answering.extractive import split_sentences as quoted_sentences
from chat.answering.grounding import sentences_citing
from chat.answering.text import split_sentences


def test_titles_and_initials_do_not_end_a_sentence():
    text = ("Ms. Halvorsen guides the zebras. She took over when Dr. J. R. Smith retired. "
            "Mr. and Mrs. Olsen help her, as does Prof. Berg.")
    assert split_sentences(text) == ["Ms. Halvorsen guides the zebras.", "She took over when Dr. J. R. Smith retired.",
                                     "Mr. and Mrs. Olsen help her, as does Prof. Berg."]


def test_latin_and_dotted_abbreviations_do_not_end_a_sentence():
    text = "Berries, e.g. Bilberries, i.e. The dark ones, etc. Are eaten. It is a U.S. Army rule. It ends here."
    assert split_sentences(text) == ["Berries, e.g. Bilberries, i.e. The dark ones, etc. Are eaten.",
                                     "It is a U.S. Army rule.", "It ends here."]


def test_reference_words_hold_on_to_their_number():
    text = ("See Fig. 3 for the map. The office is at No. 4 Mill Road. St. Anne's bridge is old. "
            "The answer is no. Then go.")
    assert split_sentences(text) == ["See Fig. 3 for the map.", "The office is at No. 4 Mill Road.",
                                     "St. Anne's bridge is old.", "The answer is no.", "Then go."]


def test_decimals_and_identifiers():
    text = "The water drops below 1.5 metres. Call django.urls.path. Then 2.0 Is out. Version 3. Works!"
    assert split_sentences(text) == ["The water drops below 1.5 metres.", "Call django.urls.path.",
                                     "Then 2.0 Is out.", "Version 3.", "Works!"]


def test_questions_exclamations_and_quotes_end_sentences():
    assert split_sentences('Why? Because "it is." (Really.) Yes!') == ["Why?", 'Because "it is."', "(Really.)", "Yes!"]


def test_an_extractive_quote_is_not_cut_at_an_abbreviation():
    assert quoted_sentences("Ms. Halvorsen guides the purple zebras across the Tarn river each spring. "
                            "She has led the crossing since 1998, when Dr. J. R. Smith retired.") == [
        "Ms. Halvorsen guides the purple zebras across the Tarn river each spring.",
        "She has led the crossing since 1998, when Dr. J. R. Smith retired."]


def test_citation_markers_stay_with_their_sentence():
    answer = "- Ms. Halvorsen guides the zebras. [1] She took over from Dr. J. R. Smith [2]. Next [1]"
    assert sentences_citing(answer, 1) == ["Ms. Halvorsen guides the zebras.", "Next"]
    assert sentences_citing(answer, 2) == ["She took over from Dr. J. R. Smith."]


def test_a_day_of_the_week_does_not_end_a_sentence_in_a_real_notice():
    from tests.fidelity import parse_fidelity

    text = parse_fidelity("notice-libreoffice.odt").text
    paragraph = next(p for p in text.split("\n\n") if p.startswith("From Mon."))
    assert split_sentences(paragraph) == [
        "From Mon. 3 March the morning ferry leaves the north pier at 7:15 instead of 7:00.",
        "Tickets bought before the change stay valid, e.g. season passes and day returns."]


def test_days_units_and_common_words():
    text = ("Open Tue. 4 June. It sat. The parcel weighs 5 kg. The box is min. 3 cm deep. We sat in the sun. "
            "Then left.")
    assert split_sentences(text) == ["Open Tue. 4 June.", "It sat.", "The parcel weighs 5 kg.",
                                     "The box is min. 3 cm deep.", "We sat in the sun.", "Then left."]


def test_a_company_suffix_ends_its_sentence_but_co_waits_for_ltd():
    text = ("The mowers are supplied by Acme Ltd. The contract ends in May. Parts come from Hanwa Co. Ltd. "
            "in Busan. Support is by Initech Inc. Call them first.")
    assert split_sentences(text) == ["The mowers are supplied by Acme Ltd.", "The contract ends in May.",
                                     "Parts come from Hanwa Co. Ltd. in Busan.", "Support is by Initech Inc.",
                                     "Call them first."]
