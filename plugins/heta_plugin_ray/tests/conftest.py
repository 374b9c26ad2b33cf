from __future__ import annotations

import os

import pytest

# Ray reports usage statistics over the network unless told not to: never from a test
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


@pytest.fixture(scope="module")
def local_cluster():
    """A local Ray cluster on the loopback for the module's tests, stopped after them."""
    import ray

    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()
