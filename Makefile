# Apollo-11 front door. `make demo` and `make test` set everything up on a
# fresh machine (Debian 12): they install the Debian packages, build, and run.
SHELL := /bin/bash
.DEFAULT_GOAL := build

ROOT        := $(CURDIR)
RELEASE_DIR := build/release
ASAN_DIR    := build/asan
FUZZ_DIR    := build/fuzz
CMAKE_COMMON := -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DAPOLLO_WERROR=ON
# Two cores: more jobs only thrash.
JOBS        ?= $(shell nproc)
CTEST_ARGS  ?=
FUZZ_SECONDS ?= 60

.PHONY: deps build build-test test test-release test-asan asan-run demo bench bench-wal bench-store schema \
        bench-bus bench-compare bench-retention bench-replicas fuzz chaos format lint clean package install \
        ui test-ui screenshots demo-ui

deps:
	@bash scripts/setup-deps.sh

$(RELEASE_DIR)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(RELEASE_DIR) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Release -DAPOLLO_BIN_DIR=$(ROOT)/bin

# -g1: line tables and function names, what the sanitizers' stack traces
# need; full -g (variables, types) made this build ~30 % slower.
$(ASAN_DIR)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(ASAN_DIR) $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DAPOLLO_SANITIZE=ON

# `build`: everything, the benchmarks too. `build-test`: what the tests run
# (CMake's `all`: the benchmarks are left out, no test runs them).
build: deps $(RELEASE_DIR)/build.ninja
	cmake --build $(RELEASE_DIR) -j $(JOBS) --target all apollo_benches
	@ls bin/orchestrator bin/edge-agent bin/apollo-cli bin/apollo-bench >/dev/null

build-test: deps $(RELEASE_DIR)/build.ninja
	cmake --build $(RELEASE_DIR) -j $(JOBS)
	@ls bin/orchestrator bin/edge-agent bin/apollo-cli >/dev/null

# Every test: the Release build's full suite, then the unit tests again
# under AddressSanitizer + UBSan. The ASan build runs at the lowest CPU
# priority beside the Release suite, which mostly waits on real processes
# and servers (e2e, chaos): it soaks up the idle CPU without slowing the
# tests down, and takes ~5 minutes off `make test` on 2 cores.
test: build-test ui $(ASAN_DIR)/build.ninja
	@( nice -n 19 cmake --build $(ASAN_DIR) -j $(JOBS) --target $(ASAN_TARGETS) \
	     >$(ASAN_DIR)/build.log 2>&1; echo $$? >$(ASAN_DIR)/build.rc ) & asan=$$!; \
	ctest --test-dir $(RELEASE_DIR) --output-on-failure -j $(JOBS) $(CTEST_ARGS); rel=$$?; \
	$(MAKE) --no-print-directory test-ui APOLLO_BIN=$(ROOT)/bin; ui_rc=$$?; \
	echo "make test: waiting for the ASan build (log: $(ASAN_DIR)/build.log)"; wait $$asan; \
	if [ "$$(cat $(ASAN_DIR)/build.rc)" != 0 ]; then \
	  tail -40 $(ASAN_DIR)/build.log; echo "make test: the ASan build failed; see $(ASAN_DIR)/build.log"; exit 1; fi; \
	$(MAKE) --no-print-directory asan-run; asan_rc=$$?; \
	[ $$rel -eq 0 ] || bash scripts/ctest-failures.sh $(RELEASE_DIR); \
	[ $$rel -eq 0 ] || echo "make test: the Release suite FAILED (see above)"; \
	[ $$ui_rc -eq 0 ] || node scripts/ui-failures.mjs web/playwright-report/report.json; \
	[ $$ui_rc -eq 0 ] || echo "make test: the dashboard's browser tests FAILED (see above)"; \
	[ $$rel -eq 0 ] && [ $$asan_rc -eq 0 ] && [ $$ui_rc -eq 0 ]

test-release: build-test
	ctest --test-dir $(RELEASE_DIR) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The unit-test binaries only (the daemons and benches are exercised by the
# Release run's e2e tests); the PostgreSQL and NATS suites, which start
# servers per test, run in the Release pass, to keep `make test` short.
ASAN_TARGETS := core_test agent_test wal_test agent_handlers_test agent_config_test \
                orchestrator_config_test orchestrator_test store_conformance_test cli_test \
                runtime_options_test agent_runtime_options_test sqlite_checkpointer_test
test-asan: deps $(ASAN_DIR)/build.ninja
	cmake --build $(ASAN_DIR) -j $(JOBS) --target $(ASAN_TARGETS)
	@$(MAKE) --no-print-directory asan-run

asan-run:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(ROOT)/tests/lsan.supp \
	  ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) -L unit -LE 'postgres|nats' $(CTEST_ARGS)

demo: build ui
	@bash scripts/demo.sh

# The same, then keeps the system (and the dashboard) up until Ctrl-C.
demo-ui: build ui
	@APOLLO_DEMO_KEEP=1 bash scripts/demo.sh

# The web dashboard (web/README.md), built into web/dist, which the orchestrator
# serves at /. Its browser tests and screenshots (docs/screenshots/) drive
# Debian's chromium against real daemons from bin/ (or APOLLO_BIN=DIR: no build).
# npm ci only when package-lock.json changed since the last install.
ui: deps
	cd web && { [ node_modules/.package-lock.json -nt package-lock.json ] || \
	  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund; } && npm run build
test-ui: $(if $(APOLLO_BIN),,build) ui
	rm -f web/playwright-report/report.json
	cd web && APOLLO_BIN=$(or $(APOLLO_BIN),$(ROOT)/bin) npm test
screenshots: $(if $(APOLLO_BIN),,build) ui
	cd web && APOLLO_BIN=$(or $(APOLLO_BIN),$(ROOT)/bin) npm run screenshots

# Release artefacts (docs/operations.md): apollo-orchestrator, apollo-edge-agent and
# apollo-cli .debs (systemd units, /etc/apollo configs) and the release tarball
# (bin/, config/, schema.sql), into build/package/.
package: build ui
	bash scripts/package.sh package bin build/package

# make install PREFIX=/opt/apollo [DESTDIR=...]: bin/, etc/apollo/ (an existing
# config is kept), share/apollo/, lib/systemd/system/.
PREFIX ?= /usr/local
install: build ui
	bash scripts/package.sh install bin $(PREFIX)

# Every benchmark; figures and how to read them are in BENCHMARKS.md.
bench: build
	bin/apollo-bench $(BENCH_ARGS)
	$(RELEASE_DIR)/bench/wal_bench
	STORE_BENCH=$(RELEASE_DIR)/bench/store_bench bash scripts/bench-store.sh
	$(RELEASE_DIR)/bench/bus_bench

# <repo>/schema.sql is the PostgreSQL rendering of src/store/engine/schema.cc
# (a test fails when they differ).
schema: build
	$(RELEASE_DIR)/src/store/store_schema > schema.sql

bench-wal: build
	$(RELEASE_DIR)/bench/wal_bench

# SQLite, then a throwaway PostgreSQL server the script starts and stops.
bench-store: build
	STORE_BENCH=$(RELEASE_DIR)/bench/store_bench bash scripts/bench-store.sh

# Event bus (issue 7): events/s publish -> consume -> store for the store
# alone, the embedded bus and NATS JetStream (a throwaway nats-server), in
# one run so the ratios compare like with like: `bus=<name> events_per_s=...`.
bench-bus: build
	$(RELEASE_DIR)/bench/bus_bench $(BUS_BENCH_ARGS)

# Retention soak (issue 16): steady load for SOAK_SECONDS (600) with a
# 1-minute retention, SQLite then PostgreSQL; size and rows must level off.
bench-retention: build
	bash scripts/bench-retention.sh $(ROOT)/bin

# Scenarios 1 and 3 beside Celery and BullMQ (../shared/peers), one sitting.
bench-compare: build
	bash scripts/bench-compare.sh $(ROOT)/bin

# Several orchestrators on PostgreSQL + NATS: throughput with 1 and 3
# replicas, and failover times over 20 kills of the leader (docs/replicas.md).
bench-replicas: build
	bash scripts/bench-replicas.sh $(ROOT)/bin

# Every libFuzzer target (fuzz/README.md) for FUZZ_SECONDS (default 60) each,
# from its checked-in seed corpus fuzz/corpus/<name>. New inputs it finds go
# to a scratch dir, build/fuzz/new-corpus/<name>, not the corpus.
FUZZ_TARGETS := task_spec agent_session config
# agent_session_fuzz runs the store's, the dispatcher's and gRPC's threads:
# their coverage makes ~50k features, and the entropic schedule then takes
# most of the time (37 against 460 execs/s). Its center keeps state from
# input to input, so it checks leaks itself, once at exit (its header).
FUZZ_ARGS_agent_session := -entropic=0 -detect_leaks=0
define fuzz_one
	mkdir -p $(FUZZ_DIR)/new-corpus/$(1)
	@echo "fuzz: $(1)_fuzz for $(FUZZ_SECONDS) s"
	$(FUZZ_DIR)/fuzz/$(1)_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 $(FUZZ_ARGS_$(1)) \
	  -artifact_prefix=$(FUZZ_DIR)/$(1)- $(FUZZ_DIR)/new-corpus/$(1) fuzz/corpus/$(1)

endef
fuzz: deps
	CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAPOLLO_FUZZ=ON
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target $(addsuffix _fuzz,$(FUZZ_TARGETS))
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_one,$(t)))

# The partition and crash simulator with its consistency checker (tests/chaos,
# RELIABILITY.md). SEED empty: a random one (printed); DURATION in seconds.
# CHAOS_ARGS e.g. "--pg --nats" for PostgreSQL + NATS JetStream, "--keep".
SEED     ?=
DURATION ?= 600
AGENTS   ?= 20
CHAOS_ARGS ?=
chaos: build
	python3 tests/chaos/chaos.py --bin $(ROOT)/$(RELEASE_DIR)/test-bin $(if $(SEED),--seed $(SEED)) \
	  --duration $(DURATION) --agents $(AGENTS) $(CHAOS_ARGS)

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

# clang-tidy on the C++ files changed against HEAD (staged, unstaged, new).
lint: $(RELEASE_DIR)/build.ninja
	@files=$$( (git diff --name-only HEAD; git ls-files --others --exclude-standard) \
	  | grep -E '\.cc$$' | sort -u); \
	if [ -z "$$files" ]; then echo "lint: no changed .cc files"; exit 0; fi; \
	clang-tidy -p $(RELEASE_DIR) --quiet $$files

clean:
	rm -rf build bin
