"""The pact-tui domain: context trees, the event store, document collaboration, master logs.

Nothing in this package imports textual, rich or pact_tui (a test enforces it).
"""
