"""The pure part: which titles and headings a document yields, and how query words score against them."""

from __future__ import annotations

from heta_framework.kb.documents import Chunk
from heta_plugin_example.titles import entry_words, fold, query_words, score, title_entries, words


def chunk(text: str, index: int = 0, start: int = 0, name: str = "whale.md", **metadata) -> Chunk:
    return Chunk(
        id=f"doc-{index:05d}", document_id="doc", text=text, index=index, start=start, end=start + len(text),
        source=f"/data/{name}", metadata={"name": name, **metadata},
    )


def test_plurals_and_case_fold_to_one_word():
    assert {fold("Whales"), fold("whale")} == {"whale"}
    assert {fold("colonies"), fold("colony")} == {"colony"}
    assert {fold("foxes"), fold("fox")} == {"fox"}
    assert fold("class") == "class" and fold("virus") == "virus"


def test_stop_words_are_dropped_unless_nothing_else_is_left():
    assert query_words("Who discovered the penicillin?") == {"discovered", "penicillin"}
    assert query_words("the") == {"the"}
    assert query_words("上海") == {"上", "海"}


def test_full_coverage_beats_partial_and_a_focused_title_beats_a_long_one():
    query = query_words("whale")
    assert score(query, words("Whale"), "title") > score(query, words("Whale watching"), "title")
    assert score(query, words("Whale"), "title") > score(query, words("Whale"), "heading")
    two = query_words("coral reef")
    assert score(two, words("Coral reef"), "title") > score(two, words("Great Barrier Reef"), "title") > 0
    assert score(two, words("Ocean"), "title") == 0


def test_markdown_title_and_headings_point_at_their_chunks():
    first = chunk("# Whale\n\nWhales are marine mammals.\n\n## Anatomy\n\nLarge.", index=0, start=0)
    # overlap: "## Anatomy" is repeated at the start of the next chunk, where its section lives
    second_text = "## Anatomy\n\nLarge. Whales have blubber.\n\n### Blubber #\n\nFat."
    second = chunk(second_text, index=1, start=first.text.index("## Anatomy"))
    entries = title_entries([second, first])
    assert [(e["kind"], e["text"], e["level"], e["chunk"]["index"]) for e in entries] == [
        ("title", "Whale", 0, 0),
        ("heading", "Anatomy", 2, 1),
        ("heading", "Blubber", 3, 1),
    ]
    assert [e["text"] for e in title_entries([first, second], max_heading_level=2)] == ["Whale", "Anatomy"]


def test_parser_title_wins_and_file_name_is_the_last_resort():
    html = chunk("Computer\nA computer is a machine.", name="computer.html", title="Computer")
    assert [(e["kind"], e["text"]) for e in title_entries([html])] == [("title", "Computer")]
    word = chunk("Fleming noticed a mould.", name="penicillin-notes.docx")
    assert [e["text"] for e in title_entries([word])] == ["penicillin notes"]
    # "#" lines in a non-Markdown file are not headings
    text = chunk("# not a heading\nplain text", name="notes.txt")
    assert [e["text"] for e in title_entries([text])] == ["notes"]
    assert title_entries([]) == []


def test_a_heading_answers_to_its_document_title_too():
    first = chunk("# Whale\n\nMarine mammals.", index=0)
    second = chunk("## Migration\n\nThousands of kilometres.", index=1, start=len(first.text))
    title, migration = title_entries([first, second])
    assert migration["title"] == "Whale"
    assert entry_words(migration) == {"whale", "migration"}
    assert entry_words(title) == {"whale"}
    query = query_words("whale migration")
    assert score(query, entry_words(migration), "heading") > score(query, entry_words(title), "title")
