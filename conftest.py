"""Workspace-wide test settings (each distribution's own tests/conftest.py holds its fixtures).

``make test`` runs the suite on every core with pytest-xdist (``--dist loadgroup``). Tests that share
one expensive server per session (a PostgreSQL server from the pgserver wheel) run on one worker
together, so the server starts once, not once per worker.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent

#: folder (relative to the workspace) -> xdist group: every test under it runs on one worker
ONE_WORKER = {
    "plugins/heta_plugin_postgres/tests": "postgres",
}


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        # an xdist worker starts with COLUMNS=80 and LINES=24, which the CLI honours as a terminal's size:
        # its tests must see the environment of a plain run (piped output, no width)
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)
        # one OpenMP thread per worker: the workers already use every core, and two workers each running
        # torch on every core spend the time contending (read when torch is first imported, after this)
        os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        for folder, group in ONE_WORKER.items():
            if path.is_relative_to(ROOT / folder):
                item.add_marker(pytest.mark.xdist_group(group))
