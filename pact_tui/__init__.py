"""pact-tui: a terminal inspector for live agent context and live multi-agent documents."""

__version__ = "0.1.0"
