"""Contexts built from what an agent was sent: a gptme conversation directory (its master log,
its compacted views) or a provider's messages list, as the context commands any client runs.

``plan`` is pure (messages → commands); ``gptme`` reads a directory with the master-log reader
(``engine.masterlog``) and follows it as gptme appends; ``messages`` reads an OpenAI-style or
Anthropic-style list. The workspace runs the commands (``Workspace.create_context_with``: the
context and every command in one transaction).
"""
