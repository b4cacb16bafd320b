# The two commands of the README: `make demo` and `make test`. Both set everything up first:
# what is missing is installed or named in the first lines, never found missing minutes later.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: demo test install check check-java clean test-pyspark35 mutations

# Both venvs are made the same way: pip's output in the venv's install.log, a line per package
# on the terminal (.ci/pip-install).
define make_venv
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "commitsleuth needs Python 3.10 or newer (found $$($(PYTHON) --version))."; exit 1; }
	@echo "Creating $(1) and installing commitsleuth $(3)into it (the whole log: $(1)/install.log)"
	@$(PYTHON) -m venv $(1)
	@: > $(1)/install.log
	@.ci/pip-install $(1) $(1)/install.log --upgrade pip
	@.ci/pip-install $(1) $(1)/install.log $(2) -e '.[test]'
	@touch $(1)/.installed
endef

$(STAMP): pyproject.toml
	$(call make_venv,$(VENV),,)

install: $(STAMP)

# Spark (live capture, event logs through the JVM, the Spark engine) needs Java 17 or newer. A
# JDK rather than a JRE: live capture compiles its lean spool writer with the JVM's own compiler
# (with a JRE, Spark's own writer writes the spool, which costs the job more).
check-java:
	@.ci/check-setup

# make test also needs Chromium (the report's browser tests): installed or named here.
check:
	@.ci/check-setup --chromium

demo: check-java install
	$(BIN)/commitsleuth demo

# Live capture is also proven on PySpark 3.5: its tests run again in a second venv.
VENV35  ?= .venv-pyspark35
STAMP35 := $(VENV35)/.installed
LIVE_TESTS := tests/test_live_capture.py tests/test_live_lean_spool.py tests/test_live_rig.py tests/test_spark_plan_live.py tests/test_redaction_live.py tests/test_live_recovery.py

$(STAMP35): pyproject.toml
	$(call make_venv,$(VENV35),'pyspark==3.5.*',with PySpark 3.5 )

# One pass of pytest: its output on the terminal and in LOG, its exit code in LOG.rc.
# $(1) python, $(2) pytest arguments, $(3) log
run_pass = ( $(1) -m pytest $(2) $(PYTEST_ARGS) < /dev/null; echo $$? > $(3).rc ) 2>&1 | tee $(3)
# The closing line of a pass: what ran, passed or FAILED, and pytest's own summary.
ARGS_SAID = $(subst ",\",$(strip $(PYTEST_ARGS)))
say_pass = rc=$$(cat $(2).rc); sum=$$(tail -n 1 $(2) | sed 's/^=* *//; s/ *=*$$//'); \
	if [ "$$rc" = 0 ]; then echo "make test: $(1): passed ($$sum)"; \
	else echo "make test: $(1): FAILED (pytest exit $$rc: $$sum)"; fi

# Everything is checked and installed before a test runs; both passes run whatever the first
# gave, and the exit status is 0 only when both passed (pytest's 5, no test collected, fails).
# The first pass runs on TEST_WORKERS processes (pytest-xdist), a file at a time on each
# (loadfile: a module's fixtures, a loaded store or a Spark run, are set up once, not once per
# batch of its tests), in the order collected: the longest files first (conftest.py), not
# xdist's default of the files with most tests first, which left the one-test Spark files to the
# end. Tests spread one by one (set module fixtures up again) took 37.9 min on the 2-core box,
# against 51.4 min in one process.
TEST_WORKERS ?= 2
test: check install $(STAMP35)
	@$(call run_pass,$(BIN)/python,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder,$(VENV)/test.log)
	@$(call run_pass,$(VENV35)/bin/python,$(LIVE_TESTS),$(VENV35)/test.log)
	@echo ""
	@$(call say_pass,1/2 $(if $(ARGS_SAID),pytest $(ARGS_SAID),the whole suite) ($(VENV)),$(VENV)/test.log)
	@$(call say_pass,2/2 the live-capture tests again on PySpark 3.5$(if $(ARGS_SAID), with $(ARGS_SAID)) ($(VENV35)),$(VENV35)/test.log)
	@[ "$$(cat $(VENV)/test.log.rc)" = 0 ] && [ "$$(cat $(VENV35)/test.log.rc)" = 0 ]

# The full mutation run (tests/mutation_coverage.py) in MUTATION_SHARDS processes at once, their
# whole output in $(VENV)/mutations.log.<k>, then the check of its shortcuts
# (tests/mutation_runner_check.py, $(VENV)/mutations.log.runner); its static checks run in `make test`.
MUTATION_SHARDS ?= 2
mutations: install
	.ci/mutations $(BIN)/python $(VENV)/mutations.log $(MUTATION_SHARDS) $(PYTEST_ARGS)

test-pyspark35: check-java $(STAMP35)
	$(VENV35)/bin/python -m pytest $(LIVE_TESTS) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(VENV35) *.egg-info build commitsleuth-demo.duckdb commitsleuth-demo.html report.html
