"""PostgreSQL for postgres tasks: the servers the runtimes start (providers/: engines) and the
checks that judge a candidate by its database (checks/: pytest items and fixtures)."""
