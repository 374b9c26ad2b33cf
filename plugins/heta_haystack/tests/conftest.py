"""A small real knowledge base (heta_framework.testing.sample_kb: core's SQL recipe) built once per module."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from heta_framework.testing.sample_kb import SAMPLE_TEXTS, SQL_RECIPE, build_sample_kb

# haystack-ai sends usage telemetry (PostHog) from a background thread once imported; no test may touch the network
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")


@pytest.fixture(scope="session")
def build_knowledge_base() -> Callable[[Path, Mapping[str, Any]], Path]:
    return build_sample_kb


@pytest.fixture(scope="module")
def kb_path(tmp_path_factory) -> Path:
    """The folder of a built knowledge base; each test opens it itself, as a user would."""
    return build_sample_kb(tmp_path_factory.mktemp("heta") / "kb", SQL_RECIPE)


@pytest.fixture(scope="session")
def texts() -> dict[str, tuple[str, str]]:
    """document id -> (topic, text) of the knowledge base's documents."""
    return SAMPLE_TEXTS
