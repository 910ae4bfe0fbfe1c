"""Scheduling: a worker's pool of browser sessions and which scenarios run in it together, under a deadline."""
