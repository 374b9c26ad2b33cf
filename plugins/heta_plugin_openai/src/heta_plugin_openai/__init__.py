"""Heta plugin: language and embedding models from OpenAI or any OpenAI-compatible server.

Models named ``openai/<model>`` in a recipe are served by the official ``openai``
client. Set ``base_url`` to use vLLM, llama.cpp, Ollama or any other server that
speaks the OpenAI API. Options, defaults and errors: docs/plugins/openai.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_framework.common.lazy import lazy_attributes
from heta_framework.common.models import ModelProvider
from heta_framework.plugins import hookimpl

from heta_plugin_openai.options import OpenAIOptions

if TYPE_CHECKING:
    from heta_plugin_openai.embedding import OpenAIEmbeddingClient
    from heta_plugin_openai.language import OpenAILanguageClient

# The clients import the ``openai`` package, which takes seconds: they load when a recipe's model is
# created (or a name below is asked for), not when `heta` discovers its plugins.
__getattr__ = lazy_attributes(
    __name__, {"OpenAIEmbeddingClient": "heta_plugin_openai.embedding", "OpenAILanguageClient": "heta_plugin_openai.language"}
)

__all__ = ["OpenAIEmbeddingClient", "OpenAILanguageClient", "OpenAIOptions", "PROVIDER", "create_client"]


def create_client(config):
    """Build the client for ``config`` without touching the network."""
    from heta_plugin_openai.embedding import OpenAIEmbeddingClient
    from heta_plugin_openai.language import OpenAILanguageClient

    if config.kind == "language":
        return OpenAILanguageClient(config)
    if config.kind == "vision":  # the same chat completions, asked with an image part (read_image)
        return OpenAILanguageClient(config)
    if config.kind == "embedding":
        return OpenAIEmbeddingClient(config)
    raise ValueError(f"heta-plugin-openai serves language, vision and embedding models, not {config.kind!r} ({config.model_name})")


PROVIDER = ModelProvider(
    name="openai",
    kinds=frozenset({"embedding", "language", "vision"}),
    create=create_client,
    description="OpenAI or any OpenAI-compatible server (set base_url): chat completions, embeddings, image reading",
)


@hookimpl
def register_model_providers(register):
    register(PROVIDER)
