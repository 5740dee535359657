# Veil's two everyday commands (see README "Quick start"). Both are idempotent: they make the
# virtual environment .venv on first use and bring it up to date when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test setup check-system benchmark clean demo-data

run: $(STAMP)
	@$(PYTHON) scripts/check_system.py --window
	$(BIN)/veil --demo

test: $(STAMP)
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/lint-imports --config pyproject.toml
	$(BIN)/python -m pytest -q -n auto --dist loadfile

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) scripts/check_system.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[gui,mining,spark,statfiles,test]"
	$(BIN)/python scripts/compile_kernels.py
	@touch $(STAMP)

benchmark: $(STAMP)
	$(BIN)/python -m pytest -q -m benchmark benchmarks -p no:cacheprovider -o addopts=""

demo-data: $(STAMP)
	$(BIN)/python scripts/make_demo_data.py

clean:
	rm -rf $(VENV) build *.egg-info
