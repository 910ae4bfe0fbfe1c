"""app.build's checks measured by the harness (arXiv 2509.03310): the clickable sweep (AB-06),
Lighthouse's performance score (AB-07) and prompt correspondence by a judge model (AB-02).

``grades.py`` holds the checks, grades and thresholds; ``sweep.py`` and ``lighthouse.py``
measure; ``prompt.py`` asks the judge; ``items.py`` makes each an item of a candidate's run;
scores/app_build.py turns them into viability, Q and app.build's Table 4. docs/appbuild.md
describes the whole.
"""
