from reader.candidates import candidate_text, points_back, row_text


def test_a_sentence_that_points_back_is_read_after_the_one_before_it():
    assert points_back("This is the default.")
    assert points_back("“It is ignored when the file is missing.")
    assert not points_back("The default is 50.")
    assert not points_back("Thistle grows here.")
    text = candidate_text("Rules-Requires-Root", "This is the default.", before='If "no", nothing is built as root.')
    assert text == 'Rules-Requires-Root: If "no", nothing is built as root. This is the default.'


def test_a_row_is_each_cell_after_its_header_and_empty_cells_are_left_out():
    assert row_text(["Item", "Location", "Notes"], ["Rotavator", "Shed 2", ""]) == "Item: Rotavator; Location: Shed 2"
    assert row_text(["Item"], ["Rake", "Barn"]) == "Item: Rake; Column 2: Barn"


def test_a_long_candidate_is_cut():
    assert len(candidate_text("H", "word " * 500)) <= 3 + 600
