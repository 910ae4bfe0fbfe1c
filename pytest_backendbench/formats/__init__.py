"""The field's shared formats, read and written: ATIF trajectories (``atif``), Harbor tasks
(``harbor_task``, ``harbor_export``, ``harbor_import``) and Harbor's parity records (``parity``)."""
