"""Kernel drills tutor: Triton exercises with diagnoses and staged hints.

The core (catalogue, workspace, runner, diagnoses, hints, progress, bench) is plain Python that
never imports Textual; `tutor.ui` is the Textual app on top of it; `tutor.harness` is what the
drill tests use inside the child pytest process.
"""

__version__ = "0.1.0"
