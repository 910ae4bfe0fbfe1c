"""The model client: how the harness talks to an OpenAI-compatible chat-completions server (engines layer)."""
