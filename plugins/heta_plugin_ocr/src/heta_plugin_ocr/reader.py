"""``OcrReader``: a vision client that transcribes an image with RapidOCR, offline.

RapidOCR finds text lines (PP-OCRv4 detection) and reads each one (PP-OCRv4
recognition), both ONNX models inside the rapidocr-onnxruntime wheel. The lines come
back as boxes; they are put in reading order here (top to bottom, left to right within
a line) and joined, one text line per line. OCR transcribes only: it cannot describe a
picture, so an image without text reads as empty (``image_text_empty``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from heta_framework.common.models import Completion

#: boxes widened beyond the detector's default (1.6): with the default, the recognition model often
#: drops the spaces of Latin text whose box is cut close to the letters (bench/bench_ocr.py measures it)
UNCLIP_RATIO = 2.4
#: RapidOCR's 0/180 degree line classifier is off: on upright pages it turned some lines upside down
#: ("iapm si buuni" for "Turing is widely") and cost accuracy; pages are rarely printed upside down
USE_ANGLE_CLASSIFIER = False


def reading_order(boxes: Sequence[tuple[Sequence[Sequence[float]], str]]) -> str:
    """Text of ``(quadrilateral, text)`` boxes: a box whose middle lies within the current line's height
    joins that line; lines top to bottom, boxes in a line left to right."""
    placed = sorted(
        ((min(p[1] for p in quad), max(p[1] for p in quad), min(p[0] for p in quad), text) for quad, text in boxes if text.strip()),
        key=lambda box: (box[0], box[2]),
    )
    lines: list[list[tuple[float, str]]] = []
    bottom = float("-inf")
    for top, low, left, text in placed:
        if lines and (top + low) / 2 < bottom:
            lines[-1].append((left, text))
            bottom = max(bottom, low)
        else:
            lines.append([(left, text)])
            bottom = low
    return "\n".join(" ".join(text for _, text in sorted(line)) for line in lines)


class OcrReader:
    """``VisionClient`` for ``ocr/default``: loads the models on the first image, one image at a time."""

    def __init__(self, model_name: str = "ocr/default", *, threads: int | None = None):
        self.model_name = model_name
        self._threads = threads
        self._engine: Any = None
        # one engine per reader; onnxruntime already spreads one image over the cores, and reading
        # several at once would only make each wait longer
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._engine is None:
            from rapidocr_onnxruntime import RapidOCR

            threads = {} if self._threads is None else {"intra_op_num_threads": self._threads}
            self._engine = RapidOCR(det_unclip_ratio=UNCLIP_RATIO, use_cls=USE_ANGLE_CLASSIFIER, **threads)
        return self._engine

    def transcribe(self, image: bytes) -> str:
        """The image's text, lines in reading order; ``""`` when it finds none."""
        with self._lock:
            found, _ = self._load()(image)
        return reading_order([(box[0], box[1]) for box in found or ()])

    async def read_image(self, image: bytes, media_type: str, instruction: str) -> Completion:
        # the instruction is for language models; OCR always transcribes
        return Completion(text=await asyncio.to_thread(self.transcribe, image))
