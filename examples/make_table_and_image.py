"""Write the demo's one spreadsheet and one image into examples/documents (run once; both files are committed).

- space/planets.xlsx: two sheets (Planets, Missions), a header row each, so the demo shows sheet and
  row provenance ("planets.xlsx sheet Planets rows 2-9").
- ocean/mariana-trench.png: a few lines of text rendered with Pillow's bundled font, so the demo shows
  what an image needs: with no vision model and no OCR plugin it is a ``needs_vision_model`` issue; with
  heta-plugin-ocr installed its text is read offline.

    .venv/bin/python examples/make_table_and_image.py
"""

from __future__ import annotations

import datetime
from pathlib import Path

DOCUMENTS = Path(__file__).resolve().parent / "documents"

PLANETS = [
    ("Planet", "Diameter (km)", "Moons", "Distance from the Sun (AU)", "Length of day (hours)"),
    ("Mercury", 4879, 0, 0.39, 4222.6),
    ("Venus", 12104, 0, 0.72, 2802.0),
    ("Earth", 12756, 1, 1.0, 24.0),
    ("Mars", 6792, 2, 1.52, 24.7),
    ("Jupiter", 142984, 95, 5.2, 9.9),
    ("Saturn", 120536, 146, 9.54, 10.7),
    ("Uranus", 51118, 28, 19.19, 17.2),
    ("Neptune", 49528, 16, 30.07, 16.1),
]
MISSIONS = [
    ("Mission", "Launch year", "Target", "Achievement"),
    ("Sputnik 1", 1957, "Earth orbit", "first artificial satellite"),
    ("Vostok 1", 1961, "Earth orbit", "first human in space, Yuri Gagarin"),
    ("Apollo 11", 1969, "Moon", "first crewed Moon landing"),
    ("Voyager 1", 1977, "Jupiter and Saturn", "first probe to reach interstellar space"),
    ("Hubble Space Telescope", 1990, "Earth orbit", "deep images of distant galaxies"),
]
IMAGE_LINES = [
    "The Mariana Trench",
    "The Mariana Trench in the western Pacific Ocean",
    "is the deepest known place on Earth.",
    "Its deepest point, the Challenger Deep,",
    "lies about 10,935 metres below sea level.",
]


def write_workbook(path: Path) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    planets = workbook.active
    planets.title = "Planets"
    for row in PLANETS:
        planets.append(row)
    missions = workbook.create_sheet("Missions")
    for row in MISSIONS:
        missions.append(row)
    fixed = datetime.datetime(2026, 1, 1)  # no build-time timestamps in the file's properties
    workbook.properties.created = workbook.properties.modified = fixed
    workbook.save(path)


def write_image(path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=30)  # Pillow's bundled font: the same pixels on every machine
    image = Image.new("L", (900, 60 + 48 * len(IMAGE_LINES)), color=255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(IMAGE_LINES):
        draw.text((40, 30 + 48 * number), line, fill=0, font=font)
    image.save(path, format="PNG")


def main() -> None:
    write_workbook(DOCUMENTS / "space" / "planets.xlsx")
    write_image(DOCUMENTS / "ocean" / "mariana-trench.png")


if __name__ == "__main__":
    main()
