"""heta-plugin-ocr on generated scanned pages: seconds per page and character accuracy against the known text.

Pages are A4 at 150 dpi (1240 x 1754 px) with 30 lines of about 64 characters in Pillow's bundled
font at 24 px (about 11 pt), taken from the bundled demo articles (examples/documents/*/*.md).
Two kinds: ``clean`` (the rendered PNG) and ``scanned`` (turned 0.4 degrees, blurred, saved as JPEG at
quality 60, as a flatbed scan of a printout looks). Each page is read by the plugin's ``OcrReader``
(what ParseDocuments calls), with the plugin's settings (detector boxes widened, UNCLIP_RATIO; the
0/180 degree line classifier off) and with RapidOCR's defaults. Accuracy is 1 - character error rate (Levenshtein distance / reference
length), with whitespace collapsed to one space, and again with whitespace left out (RapidOCR may
drop spaces between words).

    python bench/bench_ocr.py               # 4 pages of each kind
    python bench/bench_ocr.py --pages 2     # quicker
"""

from __future__ import annotations

import argparse
import io
import re
import statistics
import textwrap
import time
from pathlib import Path

from common import machine_load, write_result
from heta_plugin_ocr import OcrReader
from heta_plugin_ocr import reader as ocr_reader
from PIL import Image, ImageDraw, ImageFilter, ImageFont

DOCUMENTS = Path(__file__).resolve().parent.parent / "examples" / "documents"
PAGE_SIZE = (1240, 1754)
LINES_PER_PAGE = 30
FONT_PX = 24


def page_texts(pages: int) -> list[str]:
    words: list[str] = []
    for path in sorted(DOCUMENTS.glob("*/*.md")):
        body = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#"))
        words.extend(body.split())
    lines = textwrap.wrap(" ".join(words), width=64)
    return ["\n".join(lines[i * LINES_PER_PAGE:(i + 1) * LINES_PER_PAGE]) for i in range(pages)]


def render(text: str, scanned: bool) -> bytes:
    font = ImageFont.load_default(size=FONT_PX)
    image = Image.new("L", PAGE_SIZE, 255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(text.splitlines()):
        draw.text((110, 120 + number * 46), line, fill=0, font=font)
    buffer = io.BytesIO()
    if scanned:
        image = image.rotate(0.4, resample=Image.BILINEAR, fillcolor=255).filter(ImageFilter.GaussianBlur(0.8))
        image.save(buffer, format="JPEG", quality=60)
    else:
        image.save(buffer, format="PNG")
    return buffer.getvalue()


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def accuracy(read: str, reference: str, *, spaces: bool) -> float:
    normal = (lambda s: " ".join(s.split())) if spaces else (lambda s: re.sub(r"\s+", "", s))
    read, reference = normal(read), normal(reference)
    return 1 - edit_distance(read, reference) / len(reference)


#: RapidOCR's own defaults beside the plugin's settings (both read when a reader loads its engine)
SETTINGS = {
    "rapidocr_defaults": {"UNCLIP_RATIO": 1.6, "USE_ANGLE_CLASSIFIER": True},
    "plugin": {"UNCLIP_RATIO": ocr_reader.UNCLIP_RATIO, "USE_ANGLE_CLASSIFIER": ocr_reader.USE_ANGLE_CLASSIFIER},
}


def measure(pages: list[str], scanned: bool, settings: dict) -> dict:
    for name, value in settings.items():
        setattr(ocr_reader, name, value)
    reader = OcrReader()
    images = [render(text, scanned) for text in pages]
    reader.transcribe(images[0])  # loads the models: counted apart, as a build pays it once
    seconds, with_spaces, without_spaces = [], [], []
    for image, text in zip(images, pages):
        started = time.perf_counter()
        read = reader.transcribe(image)
        seconds.append(time.perf_counter() - started)
        with_spaces.append(accuracy(read, text, spaces=True))
        without_spaces.append(accuracy(read, text, spaces=False))
    return {
        "pages": len(pages),
        "seconds_per_page_median": round(statistics.median(seconds), 3),
        "seconds_per_page_max": round(max(seconds), 3),
        "char_accuracy": round(statistics.mean(with_spaces), 4),
        "char_accuracy_ignoring_spaces": round(statistics.mean(without_spaces), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=4)
    args = parser.parse_args()
    pages = page_texts(args.pages)
    started = time.perf_counter()
    OcrReader()._load()  # the first load in this process: ONNX sessions for detection and recognition
    load_seconds = time.perf_counter() - started
    results = {}
    for kind in ("clean", "scanned"):
        for name, settings in SETTINGS.items():
            label = f"{kind}.{name}"
            results[label] = {**measure(pages, kind == "scanned", settings), "settings": settings}
            print(label, results[label], flush=True)
    for name, value in SETTINGS["plugin"].items():
        setattr(ocr_reader, name, value)
    write_result("ocr", {
        "page": {"pixels": list(PAGE_SIZE), "dpi": 150, "lines": LINES_PER_PAGE, "font_px": FONT_PX,
                 "characters": round(statistics.mean(len(p) for p in pages))},
        "model_load_seconds": round(load_seconds, 3),
        "results": results,
        "machine": machine_load(),
    })


if __name__ == "__main__":
    main()
