"""Value types and protocols every other layer builds on: documents and chunks, steps and their issues,
search assets, query requests and responses, component access, store and state protocols.

Nothing here runs a build or a query; it imports only ``errors``, ``common`` and itself.
"""
