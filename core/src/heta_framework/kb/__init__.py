"""Knowledge bases: recipes, steps, search protocols, the runner and ``KnowledgeBase``."""

from heta_framework.kb.documents import Chunk, SourceDocument
from heta_framework.kb.knowledge_base import DeletePlan, KnowledgeBase
from heta_framework.kb.recipe import KnowledgeModels, ParserConfig, Recipe, StoreConfig
from heta_framework.kb.record import BuildReport
from heta_framework.kb.sync import SyncKnowledgeBase

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
