"""How a build and a query run, below the ``KnowledgeBase`` facade: recipes, the step runner and its
``StepContext``, source walking, the committed view of a half-built knowledge base, compaction.

Code here takes a small protocol for "the knowledge base" (``StepHost``, ``BuildHost``, ``CompactHost``),
never the class.
"""
