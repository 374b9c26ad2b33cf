"""Tables as text: every row names its columns and says where it came from (CSV/TSV in core)."""

from __future__ import annotations

from heta_framework.builtin.delimited import parse_delimited
from heta_framework.common.tables import column_name, table_lines


def test_rows_carry_their_header_and_skip_empty_cells_and_rows():
    rows = [["Name", "Total", "Total"], ["Ada", 3.0, ""], [None, None, None], ["Grace", 2.5, 7]]
    assert list(table_lines(rows, "scores")) == [
        "[scores row 2] Name: Ada | Total: 3",
        "[scores row 4] Name: Grace | Total: 2.5 | Total (C): 7",
    ]


def test_columns_without_a_header_cell_get_letters():
    assert [column_name(i) for i in (0, 25, 26, 701, 702)] == ["A", "Z", "AA", "ZZ", "AAA"]
    rows = [["Name", ""], ["Ada", "x", "extra"]]
    assert list(table_lines(rows, "t")) == ["[t row 2] Name: Ada | B: x | C: extra"]


def test_csv_delimiters_are_sniffed_and_tsv_uses_tabs():
    semicolons = parse_delimited(b"city;country\nLyon;France\n", "places.csv")
    assert semicolons.text == "[places row 2] city: Lyon | country: France"
    tabs = parse_delimited(b"a\tb\n1\t2, with a comma\n", "values.tsv")
    assert tabs.text == "[values row 2] a: 1 | b: 2, with a comma"
    quoted = parse_delimited(b'name,quote\nAda,"The Analytical Engine, she wrote"\n', "q.csv")
    assert quoted.text == "[q row 2] name: Ada | quote: The Analytical Engine, she wrote"
    assert quoted.metadata["table_rows"] == 1


def test_a_one_column_csv_is_still_a_table():
    result = parse_delimited(b"word\nalpha\nbeta\n", "words.csv")
    assert result.text.splitlines() == ["[words row 2] word: alpha", "[words row 3] word: beta"]
