"""Entry point: wait for PostgreSQL, create the schema, serve on $PORT."""
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import uvicorn  # noqa: E402

from eventreg import settings  # noqa: E402
from eventreg.api import create_app  # noqa: E402
from eventreg.db import Pool, wait_and_migrate  # noqa: E402
from eventreg.service import Store  # noqa: E402

logging.basicConfig(level=logging.INFO)


def main():
    conninfo = settings.dsn()
    wait_and_migrate(conninfo)
    app = create_app(Store(Pool(conninfo, size=10)))
    uvicorn.run(app, host="0.0.0.0", port=settings.port(), log_level="warning")


if __name__ == "__main__":
    main()
