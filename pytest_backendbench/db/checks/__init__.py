"""The database checks of postgres tasks, as pytest sees them: each item's statements judged against its
``db_effect`` expectations (dbcheck.py, effects.py), the ``db`` fixture (fixture.py) and the snapshot
cases of ``oracles/<task>/db/*.yaml`` (db_cases.py, snapshot.py)."""
