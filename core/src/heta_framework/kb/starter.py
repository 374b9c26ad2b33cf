"""The public import path of ``heta_framework.runtime.starter`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.runtime.starter import BACKENDS, LANGUAGE_MODEL_HINT, POSTGRES_DSN_ENV, starter_recipe_toml

__all__ = ["BACKENDS", "LANGUAGE_MODEL_HINT", "POSTGRES_DSN_ENV", "starter_recipe_toml"]
