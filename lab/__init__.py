"""The lab: tools that measure the course on a GPU, apart from the product.

Each module answers a question that comes back with a new drill or a new Triton (which launch
settings a reference kernel wants, whether the coach's register counts agree with ptxas, the
compile facts the perf rules' tests read), run from the repository root as
`python -m lab.<name>`. lab/README.md indexes every probe the project has run, kept here or
removed once it had answered. Nothing in tutor/ imports the lab, and CI does not run its
checks (`python -m pytest lab` runs them by hand).
"""
