"""Event registration service (FastAPI + psycopg 3 + PostgreSQL)."""
