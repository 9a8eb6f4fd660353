# The two commands of the README: `make` installs (once) and starts the tutor; `make test`
# installs (once) and runs every test. Everything goes into a virtual environment, .venv/.
VENV ?= .venv
PY := $(VENV)/bin/python
# On a machine without an NVIDIA GPU, take torch's CPU build (small) before the package pulls
# the default one; Triton's interpreter then runs the kernels on the CPU.
CPU_TORCH ?= torch==2.13.0

.PHONY: tutor test lint
tutor: $(VENV)/.installed
	@echo "To type tutor commands (tutor check t1, tutor --help) in a shell, run this there first:"
	@echo "    . $(VENV)/bin/activate"
	$(VENV)/bin/tutor

test: $(VENV)/.installed
	$(PY) -m pytest -n auto

# ruff's lint rules and its formatter, as CI runs them.
lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	command -v nvidia-smi >/dev/null || $(PY) -m pip install -q "$(CPU_TORCH)"
	$(PY) -m pip install -q -e '.[test]'
	touch $@
