"""An estimate of generation compute and carbon, in the way E2EDev reports it.

FLOPs = 2 x tokens x active parameters (a forward pass costs about two FLOPs per parameter
per token); energy = FLOPs / (hardware FLOP per joule) x PUE; CO2e = energy x the grid's
carbon intensity. The three conversion factors depend on the hardware, the data centre and
the grid, so they are given by the user (``--bench-carbon-factors``); docs/metrics.md says
which values E2EDev used.
"""

from __future__ import annotations

from typing import Any

from ..errors import HarnessError
from ..results import TaskResult

JOULES_PER_KWH = 3.6e6


def parse_factors(text: str) -> tuple[float, float, float]:
    """``FLOP_PER_JOULE,PUE,KG_PER_KWH`` as three positive numbers."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3 or any(v <= 0 for v in values):
        raise HarnessError(f"--bench-carbon-factors {text!r}: expected three positive numbers FLOP_PER_JOULE,PUE,KG_PER_KWH, e.g. 3.0e11,1.2,0.4")
    return values[0], values[1], values[2]


def carbon_estimate(results: list[TaskResult], active_params_billion: float | None, factors: str | None) -> dict[str, Any] | None:
    """Tokens, FLOPs and (with factors) kWh and kg CO2e of the run's generations; None without
    active parameters. Repeats of one sample share one generation and count once."""
    if not active_params_billion:
        return None
    generations = {(r.task, r.sample): r.generation for r in results if r.generation}
    tokens = sum(int(g.get("tokens_in") or 0) + int(g.get("tokens_out") or 0) for g in generations.values())
    flops = 2 * tokens * active_params_billion * 1e9
    estimate: dict[str, Any] = {"tokens": tokens, "active_params_billion": active_params_billion, "flops": flops}
    if factors:
        flop_per_joule, pue, kg_per_kwh = parse_factors(factors)
        kwh = flops / flop_per_joule * pue / JOULES_PER_KWH
        estimate.update(flop_per_joule=flop_per_joule, pue=pue, kg_per_kwh=kg_per_kwh, energy_kwh=kwh, co2e_kg=kwh * kg_per_kwh)
    return estimate
