"""Wiki pages: written per document (``extractive``, ``model_pages``), stored (``persist``), split into sections and
indexed (``steps``), searched (``engines``, ``lexical``) and shown as markdown (``render``)."""
