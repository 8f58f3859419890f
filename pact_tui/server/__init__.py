"""``pact-tui serve``: the workspace's documents over the PACT v0.3 HTTP API (docs/server.md).

``app.py`` builds the FastAPI application on one open ``Workspace``: every write is a typed
engine command through ``Workspace.run_document``, every read the engine's barrier-aware views
with the key's agent as the reader. ``identity.py`` says who a request's key is, ``live.py``
follows the workspace's change feed (the event stream, long polls, due work), ``limits.py``
holds the body limit and the per-key rate limit, and ``run.py`` runs it all on uvicorn in the
workspace's asyncio loop.
"""
