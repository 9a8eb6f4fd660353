"""The Textual app of the tutor (`tutor` with no arguments).

This package is the only part of `tutor` that imports Textual. It builds on the plain core
(catalogue, runner, coach, progress, workspace) and never runs learner code itself: runs happen
in the runner's child process, driven from thread workers that post messages back.
"""
