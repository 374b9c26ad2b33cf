"""The public import path of ``heta_framework.runtime.recipe`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.runtime.recipe import (
    KnowledgeModels,
    ParserConfig,
    Recipe,
    StoreConfig,
    expand_steps,
    structure_recipe,
    structure_step,
    unstructure_step,
    validate_query_defaults,
    validate_store_options,
)

__all__ = [
    "KnowledgeModels",
    "ParserConfig",
    "Recipe",
    "StoreConfig",
    "expand_steps",
    "structure_recipe",
    "structure_step",
    "unstructure_step",
    "validate_query_defaults",
    "validate_store_options",
]
