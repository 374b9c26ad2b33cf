"""Recipe checks across the installed plugins: every structural error at once, range checks, conflicts, models resolved early."""

from __future__ import annotations

import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.errors import RecipeError, RecipeValidationError
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry

FOUR_MISTAKES = """
[models.embedding]
model_name = "local/all-MiniLM-L6-v2"
colour = "blue"

[stores.vector]
type = "faiss"
nprobe = 0

[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"
chunksize = 100

[[steps]]
step = "embed_chunk"
"""


@pytest.fixture(scope="module")
def registry():
    return PluginRegistry.from_entry_points(strict=True)


def problems_of(text: str, registry) -> list[str]:
    with pytest.raises(RecipeError) as raised:
        Recipe.from_toml(text, registry)
    return list(raised.value.problems)


def test_every_structural_error_is_reported_at_once_with_its_field_path(registry):
    problems = problems_of(FOUR_MISTAKES, registry)
    assert len(problems) == 4, problems
    assert problems[0].startswith("extra fields found (colour)") and problems[0].endswith("@ $.models.embedding")
    assert problems[1].endswith("@ $.stores.vector.nprobe") and "at least 1, got 0" in problems[1]
    assert "did you mean chunksize -> chunk_size?" in problems[2] and problems[2].endswith("@ $.steps[1]")
    assert "Did you mean 'embed_chunks'" in problems[3] and problems[3].endswith("@ $.steps[2]")


@pytest.mark.parametrize(
    ("step", "field", "value", "message"),
    [
        ("parse_documents", "max_document_mb", "-1", "max_document_mb must be a number greater than 0, got -1"),
        ("embed_chunks", "batch_size", "0", "batch_size must be a whole number of at least 1, got 0"),
        ("embed_chunks", "batch_size", "-5", "batch_size must be a whole number of at least 1, got -5"),
        ("index_full_text", "batch_size", "0", "batch_size must be a whole number of at least 1"),
        ("index_vectors", "batch_size", "true", "expected a whole number, got True"),  # not 1
        ("split_documents", "chunk_size", "true", "expected a whole number, got True"),
        ("split_documents", "chunk_size", "150.9", "expected a whole number, got 150.9"),  # not 150
        ("split_documents", "chunk_size", '"150"', "expected a whole number, got '150'"),
        ("heta_graph", "concurrency", "0", "concurrency must be a whole number of at least 1"),
        ("parse_documents", "max_document_mb", "false", "expected a number, got False"),
        ("persist_chunks", "batch_size", "0", "batch_size must be a whole number of at least 1, got 0"),
        ("persist_chunks", "batch_size", "-3", "batch_size must be a whole number of at least 1, got -3"),
        ("extract_entities", "timeout", "0", "timeout must be a number greater than 0, got 0"),
        ("deduplicate_entities", "timeout", "-1", "timeout must be a number greater than 0, got -1"),
        ("community_reports", "timeout", "0", "timeout must be a number greater than 0, got 0"),
    ],
)
def test_out_of_range_and_mistyped_step_options_are_refused(registry, step, field, value, message):
    text = f'[[steps]]\nstep = "parse_documents"\n\n[[steps]]\nstep = "{step}"\n{field} = {value}\n'
    [problem] = problems_of(text, registry)
    assert message in problem
    assert problem.endswith(f"@ $.steps[1].{field}")


def test_a_whole_float_stays_a_number_where_a_number_is_expected(registry):
    recipe = Recipe.from_toml('[[steps]]\nstep = "parse_documents"\nmax_document_mb = 5\n', registry)
    assert recipe.steps[0].max_document_mb == 5.0 and isinstance(recipe.steps[0].max_document_mb, float)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ('["split_documents", "split_documents"]', "step 2 (split_documents) repeats step 1 (split_documents)"),
        ('["split_documents", "persist_chunks", "persist_chunks"]', "step 3 (persist_chunks) repeats step 2"),
        (
            '["split_documents", "extract_entities", "build_graph", "merge_graph_into_store"]',
            "steps 3 (build_graph) and 4 (merge_graph_into_store) both publish search asset graph_tables:default",
        ),
    ],
)
def test_conflicting_steps_are_rejected_before_anything_runs(tmp_path, registry, steps, message):
    import json

    names = ["parse_documents", *json.loads(steps)]
    text = "\n".join(f'[[steps]]\nstep = "{name}"\n' for name in names)
    recipe = Recipe.from_toml('[models.embedding]\nmodel_name = "local/all-MiniLM-L6-v2"\n' + text, registry)
    with pytest.raises(RecipeValidationError) as raised:
        KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    assert any(message in problem for problem in raised.value.problems), raised.value.problems
    assert not (tmp_path / "kb").exists()


async def test_an_unknown_local_model_is_found_before_parse_and_split_run(tmp_path, registry):
    from heta_plugin_vector import EmbedChunks

    good = Recipe(steps=[ParseDocuments(), SplitDocuments()])
    kb = KnowledgeBase.create(tmp_path / "kb", good, registry=registry)
    kb.close()
    bad_models = KnowledgeModels(embedding=EmbeddingModel(model_name="local/no-such-model"))
    recipe = Recipe(models=bad_models, steps=[ParseDocuments(), SplitDocuments(), EmbedChunks()])
    with pytest.raises(RecipeValidationError, match="Unknown local embedding model 'no-such-model'"):
        KnowledgeBase.create(tmp_path / "other", recipe, registry=registry)
    loaded = KnowledgeBase.load(tmp_path / "kb", registry=registry, models=bad_models)
    with pytest.raises(RecipeValidationError, match="models.embedding \\(local/no-such-model\\)"):
        await loaded.build([SourceDocument(text="Whales are marine mammals.", id="whales")])
    assert not (tmp_path / "kb" / "objects" / "parsed").exists()  # nothing was parsed
    loaded.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("{ concurrency = true }", "concurrency must be a whole number of at least 1, got True"),
        ("{ batch_size = 150.9 }", "batch_size must be a whole number of at least 1, got 150.9"),
        ("{ timeout = -1 }", "timeout must be a number greater than 0, got -1"),
        ("{ send_dimensions = 1 }", "send_dimensions must be true or false, got 1"),
    ],
)
def test_model_options_are_checked_like_step_options_before_the_build(tmp_path, registry, options, message):
    text = f'[models.embedding]\nmodel_name = "openai/text-embedding-3-small"\napi_key = "sk-x"\noptions = {options}\n\n[[steps]]\nstep = "parse_documents"\n'
    recipe = Recipe.from_toml(text, registry)
    with pytest.raises(RecipeValidationError) as raised:
        KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    assert any(message in problem for problem in raised.value.problems), raised.value.problems
    assert "sk-x" not in str(raised.value)


@pytest.mark.parametrize(
    ("store", "field", "value", "message"),
    [
        ("text", "b", "1.5", "b must be a number between 0 and 1, got 1.5"),
        ("text", "k1", "-1", "k1 must be a number of at least 0, got -1"),
        ("text", "memory_mb", "0", "memory_mb must be a whole number of at least 1, got 0"),
        ("vector", "train_threshold", "-1", "train_threshold must be a whole number of at least 0, got -1"),
    ],
)
def test_out_of_range_store_options_are_refused(registry, store, field, value, message):
    default = {"text": "whoosh", "vector": "faiss"}[store]
    text = f'[stores.{store}]\ntype = "{default}"\n{field} = {value}\n\n[[steps]]\nstep = "parse_documents"\n'
    [problem] = problems_of(text, registry)
    assert message in problem and problem.endswith(f"@ $.stores.{store}.{field}"), problem


def test_validate_counts_each_problem_it_lists(tmp_path, registry):
    from click.testing import CliRunner
    from heta_framework.cli.main import cli

    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "recipe.toml").write_text(FOUR_MISTAKES)
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path / "kb"), "validate"])
    output = result.output  # stdout and stderr together
    listed = [line for line in output.splitlines() if line.startswith("  - ")]
    assert result.exit_code == 1 and "4 problem(s):" in output and len(listed) == 4, output
