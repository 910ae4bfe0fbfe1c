"""--bench-bdd-seed: ``Math.random`` in a scenario's pages, the same numbers in every run.

A page that draws a quiz word, a secret number or a tag with ``Math.random`` can meet its
scenario's check or miss it by chance (a "new" word equal to the last, a guess that happens to
be right), so its verdict flipped between two runs of one candidate: of E2EDev's 703 scenarios
four did, with and without concurrency. With a seed, each document of a scenario gets a
sequence of its own, derived from the seed, the task, the repeat (``--bench-repeat``: repeats
still sample different numbers), the scenario and the document's path and navigation type (a
reload draws differently from the first load); samples of one task see the same numbers, so
models are compared on the same draws. The generator is sfc32 seeded through cyrb128: uniform
in [0, 1), as the page expects. ``crypto.getRandomValues`` is left alone, and so are Web Workers
and windows or tabs opened during the scenario (the script is the scenario tab's).
"""

from __future__ import annotations

import json

SEED_OFF = "off"
DEFAULT_SEED = "0"

_SCRIPT = """(() => {
  let navigation = 0;
  try { navigation = performance.navigation.type; } catch (e) {}
  const text = %s + "|" + location.pathname + location.search + location.hash + "|" + navigation;
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  let a = (h1 ^ h2 ^ h3 ^ h4) >>> 0, b = (h2 ^ h1) >>> 0, c = (h3 ^ h1) >>> 0, d = (h4 ^ h1) >>> 0;
  const random = function random() {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  Object.defineProperty(Math, "random", { value: random, writable: true, configurable: true, enumerable: false });
})();"""


def parse_seed(text: str) -> str:
    """off or a whole number of at least 0 (kept as text)"""
    value = text.strip().lower()
    if value != SEED_OFF and not value.isdigit():
        raise ValueError(text)
    return value


def scenario_seed_key(seed: str, task: str, repeat: int, feature_name: str, line: int) -> str | None:
    """The text a scenario's pages seed ``Math.random`` from, or None with ``--bench-bdd-seed=off``.

    Made of what stays the same from run to run (never a port, a path of this machine or the
    sample), so one scenario draws the same numbers in every run, whatever ran before it.
    """
    if seed == SEED_OFF:
        return None
    return f"{seed}|{task}|{repeat}|{feature_name}|{line}"


def seeded_random_script(key: str) -> str:
    """JavaScript that, run first in every document, replaces ``Math.random`` with one seeded by key."""
    return _SCRIPT % json.dumps(key)
