"""Coaching the learner: what a check shows and which hint stage comes next.

`check` is one check of a drill as the learner meets it (run, name what a cut-short run never
reached, record); `run_hints` turns runs into progress and hint stages; `perf_hints` does the
same for the perf coach's diagnoses after a bench.
"""
