"""Which scenarios of a worker run together, and the worker's pool (one per process).

pytest runs items one after the other; the pool (bdd/pool.py) runs scenarios at the same time.
When a scenario item runs, :func:`run_in_pool` submits it and, when its candidate is a static
site, the scenario items that follow it in ``session.items`` for the same run (loadgroup puts a
run's items on one worker, in order), a few per session: they take free sessions in that order,
so while pytest waits on a slow scenario the others keep the sessions busy. Each item then takes its
own job's result in pytest's order; an item whose job was started ahead is judged exactly as if
it had started now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..interrupt import interrupt_of
from .browser_watchdog import WATCHDOG_OF_THIS_PROCESS
from .page_random import scenario_seed_key
from .pool import BrowserPool, ScenarioJob, ScenarioWork, pool_sizing

if TYPE_CHECKING:
    from .gherkin import ScenarioItem

POOL_KEY = pytest.StashKey[BrowserPool]()
"""The worker's browser pool, created on the first scenario and closed by config cleanup."""


def pool_of(config: pytest.Config) -> BrowserPool:
    """The worker's pool: ``--bench-bdd-sessions`` sessions (auto: by memory, load and idle CPU), ``--bench-bdd-timeout``."""
    pool = config.stash.get(POOL_KEY, None)
    if pool is None:
        from ..config import bench_config
        from .gherkin import browser_options, scenario_runner

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


def work_for(item: ScenarioItem, base_url: str) -> ScenarioWork:
    """What the item's scenario needs, decided in pytest's thread (options, task hints, files)."""
    from ..config import bench_config
    from ..runkey import split_run_label
    from .gherkin import _static_site_files, browser_locale, sleep_policy

    app_dir, entry_file = _static_site_files(item)
    repeat = split_run_label(item.run_key.label)[1] if item.run_key is not None else 0
    task_id = item.task.id if item.task is not None else item.path.parent.name
    entry = base_url.rstrip("/") + (item.task.primary_route if item.task is not None else "/")
    return ScenarioWork(
        feature=item.path,
        line=item.spec.line,
        step_modules=tuple(item.steps.modules),
        base_url=base_url,
        entry_url=entry,
        environment=item.steps.environment,
        sleep=sleep_policy(item.config, item.task),
        locale=browser_locale(item.config, item.task),
        app_dir=app_dir,
        entry_file=entry_file,
        random_seed_key=scenario_seed_key(bench_config(item.config).bdd_seed, task_id, repeat, item.path.name, item.spec.line),
        goal=item.goal,
    )


def run_in_pool(item: ScenarioItem, base_url: str) -> ScenarioJob:
    """Run the item's scenario (started ahead or now), start its followers, wait for its job."""
    pool = pool_of(item.config)
    work = work_for(item, base_url)
    if not pool.submitted(item.nodeid):
        pool.submit(item.nodeid, work)
    interrupt = interrupt_of(item.config)
    if work.app_dir is not None and pool.size > 1 and not (interrupt is not None and interrupt.requested):
        _start_followers(item, pool, base_url)
    return pool.take(item.nodeid)


def _start_followers(item: ScenarioItem, pool: BrowserPool, base_url: str) -> None:
    from .gherkin import ScenarioItem

    session = item.session
    try:
        index = session.items.index(item)
    except ValueError:
        return
    run_key = item.run_key
    room = pool.lookahead() - pool.in_flight()
    for follower in session.items[index + 1 :]:
        if room <= 0:
            break
        if not isinstance(follower, ScenarioItem) or follower.run_key != run_key or run_key is None:
            break  # a run's items are contiguous; another kind or run ends the look-ahead
        if follower.oracle_problems or pool.submitted(follower.nodeid):
            continue
        pool.submit(follower.nodeid, work_for(follower, base_url))
        room -= 1
