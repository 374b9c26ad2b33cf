"""The console's files: the page, its scripts and style, and the vendored browser libraries (no build step).

They open without a token, like the page itself: they hold no data; everything the console shows comes
from the API with the caller's token. Only the names listed here are served.
"""

from __future__ import annotations

from importlib import resources

JS = "text/javascript; charset=utf-8"
CSS = "text/css; charset=utf-8"

#: name under /static/ -> its media type
STATIC_FILES = {
    "page.css": CSS,
    "page.js": JS,
    "console/api.js": JS,
    "console/dom.js": JS,
    "console/markdown.js": JS,
    "console/home.js": JS,
    "console/search.js": JS,
    "console/documents.js": JS,
    "console/graph.js": JS,
    "console/evaluation.js": JS,
    # Cytoscape.js, from the npm registry (static/vendor/README.md says which version and its licence)
    "vendor/cytoscape.min.js": JS,
}

#: the page runs only its own scripts and style, talks only to this server, and is framed by nobody; an
#: inline script or event handler a document's text might smuggle in would not run
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def static_bytes(name: str) -> bytes:
    return resources.files("heta_server").joinpath(f"static/{name}").read_bytes()
