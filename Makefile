# Veil's two everyday commands (see README "Quick start"). Both are idempotent: they make the
# virtual environment .venv on first use and bring it up to date when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# numba's kernels compiled into its cache (scripts/compile_kernels.py): again when their code changes
KERNELS := $(VENV)/.kernels
KERNEL_SOURCES := engine/kernels/longest_dfs.py engine/kernels/grouping.py plugins/perturbation/rank_swap.py \
	plugins/anonymisation/_microaggregation.py plugins/anonymisation/_suppression.py \
	plugins/anonymisation/_median_cuts.py

.PHONY: run test setup check-system benchmark clean demo-data

# the window opens at once; kernels not yet compiled are compiled in the background meanwhile
run: $(STAMP)
	@$(PYTHON) scripts/check_system.py --window
	@(test -f $(KERNELS) && test -z "$$(find $(STAMP) $(KERNEL_SOURCES) -newer $(KERNELS))") \
		|| $(BIN)/python scripts/compile_kernels.py --background --stamp $(KERNELS)
	$(BIN)/veil --demo

# the tests wait for the kernels (so that no test compiles one); each worker takes whole files, the
# dearest first (tests/conftest.py, FILE_COSTS)
test: $(KERNELS)
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/lint-imports --config pyproject.toml
	$(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder --durations=20

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) scripts/check_system.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[gui,mining,spark,statfiles,test]"
	@touch $(STAMP)

$(KERNELS): $(STAMP) $(KERNEL_SOURCES)
	$(BIN)/python scripts/compile_kernels.py --stamp $(KERNELS)

benchmark: $(KERNELS)
	$(BIN)/python -m pytest -q -m benchmark benchmarks -p no:cacheprovider -o addopts=""

demo-data: $(STAMP)
	$(BIN)/python scripts/make_demo_data.py

clean:
	rm -rf $(VENV) build *.egg-info
