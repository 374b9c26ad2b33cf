"""The worker actor: opens the models a kind of work needs once, then runs its batches one at a time."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


class BatchWorker:
    """Made a Ray actor by ``RayExecutor`` (``ray.remote(BatchWorker)``), so it imports without Ray here."""

    def __init__(self, model_configs: Mapping[str, Any], model_plugins: Mapping[str, str]):
        import ray

        self._configs = dict(model_configs)
        self._plugins = dict(model_plugins)
        self._models: dict[str, Any] = {}
        self._prepared: dict[str, Any] = {}
        context = ray.get_runtime_context()
        #: "node/pid": which worker ran a batch, for the build report's per-worker counts
        self.where = f"{context.get_node_id()[:12]}/{os.getpid()}"
        # Ray restarted this actor after its process was lost: the batch it was running runs again here
        self._restarts = 1 if context.was_current_actor_reconstructed else 0

    def _model(self, key: str) -> Any:
        if key not in self._models:
            from heta_framework.plugins.registry import PluginRegistry

            config = self._configs[key]
            # the plugin that provides the model, as installed where this worker runs (only it: importing every
            # plugin would add seconds to each worker's start)
            plugin = self._plugins.get(key)
            registry = PluginRegistry.from_entry_points(only=[plugin] if plugin else None)
            self._models[key] = registry.model_provider(config.provider, config.kind).create(config)
        return self._models[key]

    async def run(self, work: Any, batch: Any) -> tuple[str, Any]:
        if work.key not in self._prepared:
            self._prepared[work.key] = work.prepare({key: self._model(key) for key in work.models})
        return self.where, await work.run(self._prepared[work.key], batch)

    def take_restarts(self) -> int:
        restarts, self._restarts = self._restarts, 0
        return restarts
