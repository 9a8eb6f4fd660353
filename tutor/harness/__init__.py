"""What the drill tests use inside the child pytest process.

- `backend`: choose the GPU or Triton's CPU interpreter (before any kernel is defined) and round
  bf16 references the way that backend rounds.
- `learner`: load the learner's file and wrap its functions, so errors and launches are observed.
- `checks`: compare outputs with the reference and with suspect references, and fail with a
  `DrillFailure` that carries a diagnosis id.
"""
