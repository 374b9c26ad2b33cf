"""Write the demo's one slide deck into examples/documents (run once; the file is committed).

- space/space-race.pptx: a title slide, two slides of bullets with speaker notes, and a slide
  with a table of crewed Moon landings, so the demo shows slide provenance
  ("space-race.pptx slide 4 Table 1 rows 2-7"). It needs heta-plugin-office.

    .venv/bin/python examples/make_deck.py

The facts are those of the demo's Wikipedia summaries (apollo-11.md, moon.md, neil-armstrong.md)
and NASA's public record of the Apollo missions.
"""

from __future__ import annotations

import datetime
from pathlib import Path

DOCUMENTS = Path(__file__).resolve().parent / "documents"

LANDINGS = [
    ("Mission", "Landed", "Landing site", "Moonwalkers"),
    ("Apollo 11", "20 July 1969", "Sea of Tranquility", "Neil Armstrong, Buzz Aldrin"),
    ("Apollo 12", "19 November 1969", "Ocean of Storms", "Pete Conrad, Alan Bean"),
    ("Apollo 14", "5 February 1971", "Fra Mauro", "Alan Shepard, Edgar Mitchell"),
    ("Apollo 15", "30 July 1971", "Hadley-Apennine", "David Scott, James Irwin"),
    ("Apollo 16", "21 April 1972", "Descartes Highlands", "John Young, Charles Duke"),
    ("Apollo 17", "11 December 1972", "Taurus-Littrow", "Eugene Cernan, Harrison Schmitt"),
]
SLIDES = [
    ("The Space Race", ["The United States and the Soviet Union, 1957-1975"], ""),
    ("The Soviet lead", [
        "Sputnik 1, the first artificial satellite, was launched on 4 October 1957",
        "Yuri Gagarin became the first human in space aboard Vostok 1 on 12 April 1961",
    ], "Sputnik's radio beeps could be heard by amateur radio operators around the world."),
    ("The race to the Moon", [
        "In 1961 President Kennedy set the goal of landing a man on the Moon before the decade was out",
        "The Apollo programme built the most powerful rocket of its time to carry three astronauts",
    ], "Apollo 13 was meant to land too: an oxygen tank failed and the crew returned safely around the Moon."),
]


def write_deck(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches, Pt

    deck = Presentation()
    for number, (title, lines, notes) in enumerate(SLIDES):
        slide = deck.slides.add_slide(deck.slide_layouts[0 if number == 0 else 1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = lines[0]
        for line in lines[1:]:
            body.add_paragraph().text = line
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    landings = deck.slides.add_slide(deck.slide_layouts[5])
    landings.shapes.title.text = "Crewed Moon landings"
    table = landings.shapes.add_table(len(LANDINGS), 4, Inches(0.3), Inches(1.5), Inches(9.4), Inches(4.5)).table
    for r, row in enumerate(LANDINGS):
        for c, value in enumerate(row):
            cell = table.cell(r, c)
            cell.text = value
            cell.text_frame.paragraphs[0].runs[0].font.size = Pt(12)
    landings.notes_slide.notes_text_frame.text = "Twelve astronauts walked on the Moon; Eugene Cernan was the last to leave it."
    fixed = datetime.datetime(2026, 1, 1)  # no build-time timestamps in the file's properties
    properties = deck.core_properties
    properties.title, properties.author, properties.last_modified_by = "The Space Race", "Heta examples", "Heta examples"
    properties.created = properties.modified = fixed
    properties.revision = 1
    deck.save(path)
    _fix_zip_times(path)


def _fix_zip_times(path: Path) -> None:
    """Rewrite the .pptx (a zip) with one fixed time on every member: the zip writer stamps the clock's time,
    and the committed file should change only when its content does."""
    import zipfile

    with zipfile.ZipFile(path) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w") as target:
        for info, data in members:
            fixed = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0))
            fixed.compress_type = info.compress_type
            target.writestr(fixed, data)


def main() -> None:
    path = DOCUMENTS / "space" / "space-race.pptx"
    write_deck(path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
