"""docs/integrations.md: each framework's example runs as written against a real knowledge base built by the first one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "integrations.md"


def python_blocks_by_section() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    for section in re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.M)[1:]:
        title = section.splitlines()[0].strip()
        sections[title] = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return sections


BLOCKS = python_blocks_by_section()
SETUP = "The knowledge base the examples use"


@pytest.fixture
def example_folder(tmp_path, monkeypatch):
    """A folder holding the examples' "my-kb", built by the doc's own first block."""
    monkeypatch.chdir(tmp_path)
    (setup,) = BLOCKS[SETUP]
    exec(compile(setup, f"{DOC.name}: {SETUP}", "exec"), {})
    assert (tmp_path / "my-kb").is_dir()
    return tmp_path


def run_example(section: str) -> dict:
    (code,) = BLOCKS[section]
    namespace: dict = {"__name__": "__docs__"}
    exec(compile(code, f"{DOC.name}: {section}", "exec"), namespace)
    return namespace


def test_each_framework_has_one_example():
    assert {"LangChain", "LlamaIndex", "Haystack"} <= set(BLOCKS)
    for section in ("LangChain", "LlamaIndex", "Haystack"):
        assert len(BLOCKS[section]) == 1, section


def test_langchain_example(example_folder, capsys):
    namespace = run_example("LangChain")
    assert namespace["documents"][0].metadata["document_id"] == "fleming"
    assert capsys.readouterr().out.startswith("fleming ")
    assert {d.metadata["topic"] for d in namespace["ocean"]} == {"ocean"}
    assert namespace["context"].startswith("[") and "] Humpback whales sing" in namespace["context"]


def test_llama_index_example(example_folder, capsys):
    namespace = run_example("LlamaIndex")
    assert namespace["nodes"][0].node.ref_doc_id == "fleming"
    assert namespace["response"].source_nodes[0].node.ref_doc_id == "fleming"
    assert "Alexander Fleming" in str(namespace["response"])  # MockLLM echoes the prompt built from the nodes
    assert capsys.readouterr().out.startswith("fleming ")


def test_haystack_example(example_folder, capsys):
    namespace = run_example("Haystack")
    assert namespace["documents"][0].meta["document_id"] == "fleming"
    assert "Penicillin was discovered by Alexander Fleming" in namespace["result"]["prompt"]["prompt"]
    restored = namespace["restored"].get_component("retriever")
    assert restored.to_dict()["init_parameters"]["knowledge_base"] == "my-kb"
    assert restored.run("coral reefs")["documents"][0].meta["document_id"] == "coral"
    restored.close()
    assert capsys.readouterr().out.startswith("fleming ")
