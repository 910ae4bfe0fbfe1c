"""Agent judges: natural-language test cases judged by a model (FullStack-Bench, WebGen-Bench).

``model.py`` talks to the judge's OpenAI-compatible server (with an on-disk cache per run),
``verdicts.py`` holds YES/PARTIAL/NO, ``cases.py`` reads ``oracles/<task>/judge/cases.yaml``,
``items.py`` makes each case a pytest item; the judges themselves are ``api_judge.py``
(backend cases), ``db_judge.py`` (database cases) and ``gui_judge.py`` (frontend cases, in
the harness's Chromium). docs/judges.md describes the whole.
"""
