# The two commands of the README: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: demo test install check-java clean test-pyspark35

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "commitsleuth needs Python 3.10 or newer (found $$($(PYTHON) --version))."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	@echo "Installing commitsleuth and its dependencies into $(VENV) (log: $(VENV)/install.log)"
	@$(BIN)/python -m pip install --upgrade pip > $(VENV)/install.log 2>&1 && \
	  $(BIN)/python -m pip install -e '.[test]' >> $(VENV)/install.log 2>&1 || \
	  { tail -n 40 $(VENV)/install.log; echo "Install failed; the whole log is in $(VENV)/install.log"; exit 1; }
	@touch $(STAMP)

install: $(STAMP)

# Spark (live capture, event logs through the JVM, the Spark engine) needs Java 17 or newer. A
# JDK rather than a JRE: live capture compiles its lean spool writer with the JVM's own compiler
# (with a JRE, Spark's own writer writes the spool, which costs the job more).
check-java:
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1); \
	if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	  echo "Java 17 or newer is needed for the Spark parts (found: $${v:-none})."; \
	  echo "  Debian/Ubuntu: sudo apt-get install openjdk-17-jdk-headless"; \
	  echo "  macOS:         brew install openjdk@17"; \
	  echo "  elsewhere:     https://adoptium.net, then put its bin/ on PATH or set JAVA_HOME"; \
	  exit 1; \
	fi

demo: install check-java
	$(BIN)/commitsleuth demo

test: install check-java
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	$(MAKE) test-pyspark35

# Live capture is also proven on PySpark 3.5: its tests run again in a second venv.
VENV35  ?= .venv-pyspark35
STAMP35 := $(VENV35)/.installed
LIVE_TESTS := tests/test_live_capture.py tests/test_live_lean_spool.py tests/test_live_rig.py tests/test_spark_plan_live.py tests/test_redaction_live.py tests/test_live_recovery.py

$(STAMP35): pyproject.toml
	$(PYTHON) -m venv $(VENV35)
	@echo "Installing commitsleuth with PySpark 3.5 into $(VENV35) (log: $(VENV35)/install.log)"
	@$(VENV35)/bin/python -m pip install --upgrade pip > $(VENV35)/install.log 2>&1 && \
	  $(VENV35)/bin/python -m pip install 'pyspark==3.5.*' -e '.[test]' >> $(VENV35)/install.log 2>&1 || \
	  { tail -n 40 $(VENV35)/install.log; echo "Install failed; the whole log is in $(VENV35)/install.log"; exit 1; }
	@touch $(STAMP35)

test-pyspark35: $(STAMP35) check-java
	$(VENV35)/bin/python -m pytest $(LIVE_TESTS) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(VENV35) *.egg-info build commitsleuth-demo.duckdb commitsleuth-demo.html report.html
