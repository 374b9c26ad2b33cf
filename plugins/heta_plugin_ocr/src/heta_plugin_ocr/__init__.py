"""heta-plugin-ocr: image files and scanned PDF pages read offline when no vision model is configured.

Registers a ``vision`` model provider named ``ocr``. ParseDocuments asks the recipe's
``models.vision`` first, then a language model that accepts images, and only then this
provider (``ocr/default``): installing the plugin is enough, no recipe change. A recipe
may also name it, ``[models.vision] model_name = "ocr/default"`` (option ``threads``: the
ONNX runtime's threads, default all cores). Text is read by RapidOCR with the PP-OCRv4
models inside the ``rapidocr-onnxruntime`` wheel; nothing is downloaded.
"""

from __future__ import annotations

from typing import Any

from heta_framework.common.models import ModelProvider
from heta_framework.errors import ModelError
from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_ocr.reader import OcrReader, reading_order

__all__ = ["OcrReader", "create_reader", "reading_order"]

_OPTIONS = {"threads"}


def create_reader(config: Any) -> OcrReader:
    """An ``OcrReader`` for ``ocr/default``; the models load on the first image."""
    if config.kind != "vision":
        raise ModelError(f"The ocr provider only reads images; {config.model_name!r} is configured as a {config.kind} model.")
    if config.model != "default":
        raise ModelError(f"The ocr provider has one model, 'ocr/default'; got {config.model_name!r}.")
    unknown = set(config.options) - _OPTIONS
    if unknown:
        raise ModelError(f"{config.model_name!r} takes only the option 'threads'; got {', '.join(sorted(unknown))}.")
    threads = config.options.get("threads")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise ModelError(f"{config.model_name!r}: threads must be a whole number of at least 1, got {threads!r}.")
    return OcrReader(config.model_name, threads=threads)


PROVIDER = ModelProvider(
    name="ocr",
    kinds=frozenset({"vision"}),
    create=create_reader,
    description="offline OCR (RapidOCR, PP-OCRv4 ONNX models in the wheel): reads images and scanned PDF pages when no vision model is configured",
)


@hookimpl
def register_model_providers(register):
    register(PROVIDER)
