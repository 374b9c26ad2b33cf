from __future__ import annotations

import os
from pathlib import Path

import pytest

# Ray reports usage statistics over the network unless told not to: never from a test
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# the local cluster's processes on 127.0.0.1 only (RayExecutor does the same for a cluster it starts);
# test_two_nodes.py starts its nodes in processes of their own, without it
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="module")
def local_cluster():
    """A local Ray cluster on the loopback for the module's tests, stopped after them."""
    import ray

    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def pytest_collection_modifyitems(items):
    """A test on a real Ray cluster is slow (make test-fast and make isolation leave it to make test); the
    recipe and error tests beside them are not."""
    here = Path(__file__).parent  # the hook sees the whole session's items: only this folder's are meant
    for item in items:
        if item.path.is_relative_to(here) and "local_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
