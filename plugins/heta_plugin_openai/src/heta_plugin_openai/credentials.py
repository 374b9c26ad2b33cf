"""Which API key an ``openai/...`` model uses.

In order: the recipe's ``api_key``; the variable named by ``api_key_env``; for
OpenAI itself (no ``base_url``, or an ``api.openai.com`` one) the ``OPENAI_API_KEY``
variable. A model with any other ``base_url`` (vLLM, llama.cpp, Ollama, a proxy)
and no key of its own gets a placeholder, because such servers usually need none
and the ``openai`` client refuses to start without one. ``OPENAI_API_KEY`` is
deliberately *not* sent to other servers: it would leak your OpenAI key to them.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.errors import ModelError

OPENAI_HOST = "api.openai.com"
PLACEHOLDER_KEY = "heta-no-key"


def talks_to_openai(base_url: str | None) -> bool:
    return not base_url or (urlsplit(base_url).hostname or "").lower() == OPENAI_HOST


def resolve_api_key(config: LanguageModel | EmbeddingModel) -> str:
    secret = config.secret()
    value = secret.reveal() if secret is not None else None
    if value:
        return value
    if config.api_key_env and talks_to_openai(config.base_url):
        raise ModelError(
            f"{config.model_name}: the environment variable {config.api_key_env} named by api_key_env is not set. "
            f"Export it, or put api_key in the recipe."
        )
    if talks_to_openai(config.base_url):
        value = os.environ.get("OPENAI_API_KEY")
        if value:
            return value
        raise ModelError(
            f"No API key for {config.model_name}: set api_key or api_key_env in the recipe's model table, "
            f"or export OPENAI_API_KEY. To use a local OpenAI-compatible server instead, set base_url."
        )
    return PLACEHOLDER_KEY
