"""Knowledge bases: recipes, steps, search protocols, the runner and ``KnowledgeBase``."""

from heta_framework.contracts.documents import Chunk, SourceDocument
from heta_framework.contracts.record import BuildReport
from heta_framework.kb.knowledge_base import DeletePlan, KnowledgeBase
from heta_framework.kb.sync import SyncKnowledgeBase
from heta_framework.runtime.recipe import KnowledgeModels, ParserConfig, Recipe, StoreConfig

__all__ = [
    "BuildReport",
    "Chunk",
    "DeletePlan",
    "KnowledgeBase",
    "KnowledgeModels",
    "ParserConfig",
    "Recipe",
    "SourceDocument",
    "StoreConfig",
    "SyncKnowledgeBase",
]
