"""A wiki page as markdown, for the command line (``python -m heta_plugin_wiki ID``) and for programs: ``show_page(kb,
document_id)``, or ``show_page(kb, "index")`` for the index page. ``readable`` decides which documents the reader may
see (default: all, the owner of the folder); a page whose document is not readable is missing for them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from heta_plugin_wiki.wiki import persist
from heta_plugin_wiki.wiki.render import index_markdown, page_markdown

INDEX = "index"


def show_page(kb: Any, page: str, readable: Callable[[str], bool] = lambda document_id: True) -> str:
    objects = kb.get_component("stores.objects")
    index = persist.load_index(objects)
    if page == INDEX:
        return index_markdown(index, readable)
    document_id = persist.document_of_page(page)
    found = persist.load_page(objects, document_id) if readable(document_id) else None
    if found is None:
        raise KeyError(f"no wiki page for document {document_id!r}; `heta documents` lists the documents, "
                       "and build_wiki_pages writes their pages")
    return page_markdown(found, index, readable)
