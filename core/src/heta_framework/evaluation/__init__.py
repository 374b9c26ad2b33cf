"""Evaluation: score query modes and recipes on labelled sets or on the knowledge base's own chunks.

``await evaluate(load_dataset("queries.jsonl"), "eval-out", recipes={"starter": recipe}, documents=["docs/"])``;
the same as ``heta eval``. See docs/evaluation.md.
"""

from heta_framework.evaluation.api import EvaluationResult, evaluate, prepare_knowledge_base, self_evaluation_set
from heta_framework.evaluation.datasets import (
    EvalQuery,
    EvalSet,
    detect_format,
    known_item_queries,
    load_beir,
    load_dataset,
    load_jsonl,
    load_multihop_rag,
    load_wikipedia,
    load_wikipedia_articles,
)
from heta_framework.evaluation.report import ModeSummary, summarize

__all__ = [
    "EvalQuery", "EvalSet", "EvaluationResult", "ModeSummary", "detect_format", "evaluate", "known_item_queries",
    "load_beir", "load_dataset", "load_jsonl", "load_multihop_rag", "load_wikipedia", "load_wikipedia_articles",
    "prepare_knowledge_base", "self_evaluation_set", "summarize",
]
