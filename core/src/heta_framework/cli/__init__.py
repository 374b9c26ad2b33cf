"""The ``heta`` command line."""
