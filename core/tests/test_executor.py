"""The executor contract in core: the ``local`` executor, ``[executor]`` in recipes, ``context.map_batches``."""

from __future__ import annotations

import asyncio

import attrs
import pytest
from heta_framework.builtin.local_executor import LocalExecutor, LocalExecutorConfig
from heta_framework.errors import RecipeError
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.kb.executor import BatchFailure, batched
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepRequirements
from heta_framework.testing import inline_plugin, make_registry
from heta_framework.testing.conformance import ExecutorSuite


@attrs.define
class Doubling:
    """Doubles numbers; raises on ``fail_on``; records how many batches ran at once."""

    fail_on: int | None = None
    running: int = 0
    most: int = 0
    prepared_with: dict = attrs.field(factory=dict)

    key = "doubling"
    models: tuple[str, ...] = ()

    def prepare(self, models):
        self.prepared_with = dict(models)
        return 2

    async def run(self, factor, batch):
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        if self.fail_on in batch:
            raise ValueError(f"no {self.fail_on}")
        return [n * factor for n in batch]


class TestLocalExecutor(ExecutorSuite):
    @pytest.fixture
    def executor(self):
        return LocalExecutor()


class NoModels:
    def model_config(self, key):
        raise KeyError(key)

    def open_model(self, key):
        raise KeyError(key)


async def test_local_map_keeps_order_reports_failures_and_hands_each_result_over_once():
    work, handed = Doubling(fail_on=5), []

    async def on_result(index, result):
        handed.append(index)

    results = await LocalExecutor().map(work, batched(list(range(10)), 3), models=NoModels(), on_result=on_result)
    assert results[0] == [0, 2, 4] and results[2] == [12, 14, 16] and results[3] == [18]
    assert isinstance(results[1], BatchFailure) and results[1].index == 1 and "ValueError: no 5" in results[1].error
    assert sorted(handed) == [0, 1, 2, 3]


async def test_local_map_bounds_the_batches_in_flight():
    work = Doubling()
    await LocalExecutor(LocalExecutorConfig(concurrency=3)).map(work, [[n] for n in range(12)], models=NoModels())
    assert work.most == 3
    work = Doubling()
    await LocalExecutor(LocalExecutorConfig(concurrency=3)).map(work, [[n] for n in range(12)], models=NoModels(), limit=1)
    assert work.most == 1  # the step's own bound wins


async def test_a_failing_on_result_stops_the_map_and_is_raised():
    async def on_result(index, result):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await LocalExecutor().map(Doubling(), [[1], [2], [3]], models=NoModels(), on_result=on_result)


def test_an_executor_no_plugin_provides_says_which_to_install(registry):
    with pytest.raises(RecipeError, match=r"Unknown executor 'ray'.*heta-plugin-ray.*\$\.executor"):
        Recipe.from_dict({"executor": {"type": "ray"}, "steps": [{"step": "parse_documents"}]}, registry)
    with pytest.raises(RecipeError, match=r"concurency.*\$\.executor"):
        Recipe.from_dict({"executor": {"type": "local", "concurency": 2}, "steps": [{"step": "parse_documents"}]}, registry)
    with pytest.raises(RecipeError, match=r"needs a 'type'"):
        Recipe.from_dict({"executor": {"concurrency": 2}, "steps": [{"step": "parse_documents"}]}, registry)


def test_a_recipe_keeps_its_executor_and_the_knowledge_base_opens_it(tmp_path, registry, sql_recipe):
    recipe = Recipe.from_dict({"executor": {"type": "local", "concurrency": 7}, "steps": [{"step": "parse_documents"}]}, registry)
    assert recipe.to_dict()["executor"] == {"type": "local", "concurrency": 7}
    assert Recipe.from_toml(recipe.to_toml(), registry) == recipe
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    assert kb.executor.name == "local" and kb.executor.config.concurrency == 7
    plain = KnowledgeBase.create(tmp_path / "plain", sql_recipe, registry=registry)
    assert plain.executor.name == "local" and plain.executor.config == LocalExecutorConfig()


@attrs.frozen
class MapStep:
    """A step that fans ``Doubling`` out and keeps what came back."""

    name = "map_step"
    requirements = StepRequirements()
    capabilities = StepCapabilities(artifacts=frozenset({"doubled"}))

    async def run(self, context):
        results = await context.map_batches(Doubling(fail_on=3), [[1, 2], [3], [4]])
        context.set_artifact("doubled", [r if not isinstance(r, BatchFailure) else None for r in results])

    def cleanup_plan(self, artifacts):
        return StepCleanupPlan()


def test_map_batches_runs_on_the_knowledge_bases_executor_and_counts_its_tasks(tmp_path):
    registry = make_registry(inline_plugin(steps=[MapStep]))
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[MapStep()]), registry=registry)
    report = kb.sync.build([SourceDocument(text="x", id="x")])
    [step] = report.steps
    assert step.stats["executor_tasks"] == 3
    assert kb.run_record.data["step_artifacts"]["map_step"]["doubled"] == [[2, 4], None, [8]]
    assert kb.executor.counts()["tasks"] == 3
