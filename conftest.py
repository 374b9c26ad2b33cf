"""Workspace-wide test settings (each distribution's own tests/conftest.py holds its fixtures).

``make test`` runs the suite on every core with pytest-xdist (``--dist loadscope``: a module's tests stay
on one worker, so its module fixtures run once). Modules marked ``slow`` are handed out first: a
minute-long module started last would leave the other workers idle while it finishes.
"""

from __future__ import annotations

import os

import pytest

# haystack-ai sends usage telemetry (PostHog) from a background thread once imported; no test may touch the network
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")


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
    # longest first is the classic greedy schedule; "slow" is the cost estimate we have. A stable sort by
    # module keeps every module's tests together and in their order (xdist requires the same order on
    # every worker, which a deterministic sort gives)
    slow_modules = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_modules)
