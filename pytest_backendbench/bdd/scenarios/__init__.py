"""Gherkin scenarios: parsed features, behave's runner over one browser session, verdicts, InfiniteWeb goals."""
