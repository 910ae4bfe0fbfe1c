"""Which scenarios of a worker run together, and the worker's pool (one per process).

pytest runs items one after the other; the pool (bdd/scheduling/pool.py) runs scenarios at the same time.
When a scenario item runs, :func:`run_in_pool` submits it and, when its candidate is a static
site, the scenario items that follow it in ``session.items`` for the same run (loadgroup puts a
run's items on one worker, in order), a few per session: they take free sessions in that order,
so while pytest waits on a slow scenario the others keep the sessions busy. Each item then takes its
own job's result in pytest's order; an item whose job was started ahead is judged exactly as if
it had started now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from ...config import bench_config
from ...interrupt import interrupt_of
from ..browser.watchdog import WATCHDOG_OF_THIS_PROCESS
from ..scenarios.behave_runner import ScenarioRunner
from ..settings import browser_options
from .pool import BrowserPool, ScenarioJob, ScenarioWork, pool_sizing

POOL_KEY = pytest.StashKey[BrowserPool]()
"""The worker's browser pool, created on the first scenario and closed by config cleanup."""
RUNNER_KEY = pytest.StashKey[ScenarioRunner]()
"""The worker's behave runner configuration (built once)."""


def scenario_runner(config: pytest.Config) -> ScenarioRunner:
    """The worker's ScenarioRunner."""
    runner = config.stash.get(RUNNER_KEY, None)
    if runner is None:
        runner = config.stash[RUNNER_KEY] = ScenarioRunner()
    return runner


def pool_of(config: pytest.Config) -> BrowserPool:
    """The worker's pool: ``--bench-bdd-sessions`` sessions (auto: by memory, load and idle CPU), ``--bench-bdd-timeout``."""
    pool = config.stash.get(POOL_KEY, None)
    if pool is None:
        bench = bench_config(config)
        workerinput = getattr(config, "workerinput", None)
        workers = int(workerinput.get("workercount", 1)) if workerinput else 1
        pool = BrowserPool(browser_options(config), pool_sizing(bench.bdd_sessions, workers), float(bench.bdd_timeout), scenario_runner(config))
        config.stash[POOL_KEY] = pool
        config.add_cleanup(pool.close)
        config.pluginmanager.register(PoolCloser(pool), f"backendbench-browser-pool-{id(pool)}")
        interrupt = interrupt_of(config)
        if interrupt is not None:
            config.add_cleanup(interrupt.add_stop(pool.kill_all))
            interrupt.add_final(WATCHDOG_OF_THIS_PROCESS.stop)  # the last resort skips atexit
    return pool


class PoolCloser:
    """Ends the pool's browsers at session finish, before xdist tells the controller this worker is done.

    The config cleanup (which also closes it) runs after that message, while the controller
    may already be tearing the worker down.
    """

    def __init__(self, pool: BrowserPool) -> None:
        self.pool = pool

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        """Close the pool first thing at session finish."""
        self.pool.close()


def run_in_pool(config: pytest.Config, nodeid: str, work: ScenarioWork, followers: Iterable[tuple[str, Callable[[], ScenarioWork]]]) -> ScenarioJob:
    """Run an item's scenario (started ahead or now), start its followers, wait for its job.

    ``followers`` are the scenario items after it of the same run, in pytest's order, each with
    the function that says its work; only a static site's are started ahead, as many as the pool
    has room for, and only once.
    """
    pool = pool_of(config)
    if not pool.submitted(nodeid):
        pool.submit(nodeid, work)
    interrupt = interrupt_of(config)
    if work.app_dir is not None and pool.size > 1 and not (interrupt is not None and interrupt.requested):
        room = pool.lookahead() - pool.in_flight()
        for follower, work_of in followers:
            if room <= 0:
                break
            if pool.submitted(follower):
                continue
            pool.submit(follower, work_of())
            room -= 1
    return pool.take(nodeid)
