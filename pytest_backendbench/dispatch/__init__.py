"""Past one machine: a run split into shard jobs that an executor (local processes, Slurm) runs.

- ``balance``: which tasks go to which shard (recorded durations, greedy longest-first);
- ``executors``: where a shard job runs and how its state is read (local, Slurm via submitit);
- ``dispatcher``: submit, watch, retry infrastructure failures, merge the shard reports.
"""
