"""Fixtures shared by the cross-distribution tests."""

from __future__ import annotations

import pytest
from heta_framework.testing.http import ScriptedServer


@pytest.fixture
def server():
    """A scripted OpenAI/Cohere-compatible HTTP server on 127.0.0.1, stopped after the test."""
    with ScriptedServer() as running:
        yield running
