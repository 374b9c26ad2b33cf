"""heta-plugin-ray: ``[executor] type = "ray"`` runs a build's fanned-out work on a Ray cluster (docs/scale-out.md)."""

from __future__ import annotations

from heta_framework.kb.executor import ExecutorType
from heta_framework.plugins import hookimpl

from heta_plugin_ray.executor import RayExecutor, RayExecutorConfig, Resources

__all__ = ["RayExecutor", "RayExecutorConfig", "Resources"]


@hookimpl
def register_executors(register):
    register(ExecutorType("ray", RayExecutor.open, RayExecutorConfig, description="worker actors on a Ray cluster (local when no address)"))
