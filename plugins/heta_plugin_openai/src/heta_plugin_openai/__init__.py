"""Heta plugin: language and embedding models from OpenAI or any OpenAI-compatible server.

Models named ``openai/<model>`` in a recipe are served by the official ``openai``
client. Set ``base_url`` to use vLLM, llama.cpp, Ollama or any other server that
speaks the OpenAI API. Options, defaults and errors: docs/plugins/openai.md.
"""

from __future__ import annotations

from heta_framework.common.models import ModelProvider
from heta_framework.plugins import hookimpl

from heta_plugin_openai.embedding import OpenAIEmbeddingClient
from heta_plugin_openai.language import OpenAILanguageClient
from heta_plugin_openai.options import OpenAIOptions

__all__ = ["OpenAIEmbeddingClient", "OpenAILanguageClient", "OpenAIOptions", "PROVIDER", "create_client"]


def create_client(config):
    """Build the client for ``config`` without touching the network."""
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
