"""Document collaboration: the PACT v0.3 protocol as a pure engine (no I/O, no clock of its own).

Commands (pydantic models matching the v0.3 request schemas) are decided against the current
state of one document; a decision is a list of v0.3 events, or a typed error with a v0.3 error
code. The projection folds those events. See docs/protocol.md and ../shared/spec/collaboration.md.
"""
