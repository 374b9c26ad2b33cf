"""A real two-node cluster on this machine: ``ray start --head`` and ``ray start --address=...``, one CPU each,
on two loopback addresses; a build's work runs on both nodes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
pytestmark = pytest.mark.slow  # starts two Ray nodes

RAY = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"  # loopback, and not 127.0.0.1, which Ray swaps for the machine's address

DRIVER = """
import asyncio, json, sys
sys.path.insert(0, {tests!r})
from ray import cloudpickle
import heta_ray_test_work as work
cloudpickle.register_pickle_by_value(work)
from heta_plugin_ray import RayExecutor, RayExecutorConfig

class NoModels:
    def model_config(self, key): raise KeyError(key)
    def open_model(self, key): raise KeyError(key)

async def main():
    executor = RayExecutor(RayExecutorConfig(address={address!r}, node_ip_address={head!r}, num_workers=2, num_cpus=1))
    try:
        results = await executor.map(work.Square(), [[n] for n in range(8)], models=NoModels())
        print(json.dumps({{"results": results, "counts": executor.counts()}}))
    finally:
        executor.close()

asyncio.run(main())
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HEAD_IP, 0))
        return probe.getsockname()[1]


def start_node(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    # its own session, so stopping it stops every process the node started and nothing else on the machine
    return subprocess.Popen([RAY, "start", "--block", *args], env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def stop(node: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(node.pid, sig)
        except ProcessLookupError:
            return
        try:
            node.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def test_work_runs_on_both_nodes_of_a_two_node_cluster(tmp_path):
    port = free_port()
    # token authentication as `ray start` sets it up by default: every node and the driver use ~/.ray/auth_token
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token"}
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)  # set for the local cluster of the other tests; nodes must join here
    # Ray's socket paths must stay under 108 bytes: a short folder, not pytest's tmp_path
    temp = Path(tempfile.mkdtemp(prefix="heta-ray-"))
    common = ["--num-cpus=1", "--disable-usage-stats", f"--temp-dir={temp}"]
    head = start_node("--head", f"--node-ip-address={HEAD_IP}", f"--port={port}", "--include-dashboard=false", *common,
                      env=env, log=tmp_path / "head.log")
    nodes = [head]
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection((HEAD_IP, port), timeout=1).close()
                break
            except OSError:
                assert head.poll() is None and time.monotonic() < deadline, (tmp_path / "head.log").read_text()[-3000:]
                time.sleep(0.5)
        nodes.append(start_node(f"--address={HEAD_IP}:{port}", f"--node-ip-address={WORKER_IP}", *common[:2],
                                env=env, log=tmp_path / "worker.log"))
        script = DRIVER.format(tests=str(HERE), address=f"{HEAD_IP}:{port}", head=HEAD_IP)
        deadline = time.monotonic() + 120
        while True:  # the second node takes a few seconds to join: until then every task runs on the head
            out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
            assert out.returncode == 0, out.stderr[-3000:]
            answer = json.loads(out.stdout.strip().splitlines()[-1])
            nodes_used = {where.split("/")[0] for where in answer["counts"]["workers"]}
            if len(nodes_used) == 2 or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert answer["results"] == [[n * n] for n in range(8)]
        assert len(nodes_used) == 2, f"tasks ran on {nodes_used} only; worker log:\n" + (tmp_path / "worker.log").read_text()[-3000:]
    finally:
        for node in reversed(nodes):
            stop(node)
        shutil.rmtree(temp, ignore_errors=True)
