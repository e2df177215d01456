# aclsim -- convenience front-end to CMake/CTest.
#
#   make demo    install deps if missing, build (build/), run build/examples/demo
#   make test    install deps if missing, build (build/), run the test-suite
#   make asan    ASan+UBSan build in build-asan/, run the test-suite
#   make tsan    TSan build in build-tsan/, run the test-suite
#   make check-mode  the test-suite (build/) with ACLSIM_CHECK=1: fails on any
#                checker report (docs/checker.md); test-checker*, ascendc-check excluded
#   make release Release build (-O3) in build-release/, no tests: the
#                warnings only -O3 finds (CI builds it)
#   make bench   Release build in build-release/, run aclsim-bench
#   make bench-check  aclsim-bench with checking off, then with ACLSIM_CHECK=1,
#                both tables side by side (bench/compare; docs/performance.md)
#   make build   configure + build build/ (default target)
#   make clean   remove all build directories
#
# Variables: WERROR=ON|OFF (warnings as errors, default ON), JOBS=2,
#            BUILD_TYPE=RelWithDebInfo, CMAKE_ARGS="extra -D... args",
#            CTEST_ARGS="extra ctest args" (e.g. CTEST_ARGS="-R test-device"),
#            BENCH_ARGS="aclsim-bench args" (e.g. "--quick --json f.json"),
#            BENCH_CHECK=1|all|oob,... (the checked run of bench-check).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build
.NOTPARALLEL:
MAKEFLAGS += --no-print-directory

CMAKE      ?= cmake
CTEST      ?= ctest
JOBS       ?= 2
WERROR     ?= ON
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
CTEST_ARGS ?=
BENCH_ARGS ?=
BENCH_CHECK ?= 1

BUILD_DIR   := build
ASAN_DIR    := build-asan
TSAN_DIR    := build-tsan
RELEASE_DIR := build-release

ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -O1
TSAN_FLAGS := -fsanitize=thread -O1

ASAN_OPTIONS  ?= detect_leaks=1:abort_on_error=0:strict_init_order=1:detect_stack_use_after_return=1
UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
TSAN_OPTIONS  ?= halt_on_error=1 second_deadlock_stack=1

# Sanitizer runtimes of GCC 12 can fail on kernels with high mmap ASLR entropy
# ("unexpected memory mapping"); run the sanitized suites with ASLR disabled
# when the kernel/container allows it.
NO_ASLR := $(shell setarch "$$(uname -m)" -R true >/dev/null 2>&1 && echo "setarch $$(uname -m) -R")

COMMON_CMAKE_ARGS = -DCMAKE_COMPILE_WARNING_AS_ERROR=$(WERROR) -DCMAKE_INSTALL_LIBDIR=lib64 $(CMAKE_ARGS)

.PHONY: build demo test asan tsan check-mode release bench bench-check clean deps help

help:
	@sed -n '3,21p' $(firstword $(MAKEFILE_LIST))

deps:
	@bash scripts/deps.sh

# $(call configure_build,<dir>,<cmake args>)
define configure_build
	$(CMAKE) -S . -B $(1) $(COMMON_CMAKE_ARGS) $(2)
	$(CMAKE) --build $(1) -j $(JOBS)
endef

# $(call run_ctest,<dir>,<env assignments>)
# Runs ctest (output also saved to <dir>/ctest.log), then prints ctest's
# "N% tests passed, F tests failed out of T" summary as the very last line
# and propagates ctest's exit status.
define run_ctest
	@rc=0; \
	env $(2) $(CTEST) --test-dir $(1) --output-on-failure -j $(JOBS) $(CTEST_ARGS) 2>&1 \
	  | tee $(1)/ctest.log || rc=$$?; \
	summary="$$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' $(1)/ctest.log | tail -n 1 || true)"; \
	if [ -z "$$summary" ]; then \
	  if grep -q 'No tests were found' $(1)/ctest.log; then summary="0 tests passed, 0 tests failed out of 0 (no tests found)"; \
	  else summary="ctest failed before running tests (exit $$rc)"; [ $$rc -ne 0 ] || rc=1; fi; \
	fi; \
	echo; echo "[$(1)] $$summary"; \
	exit $$rc
endef

build: deps
	$(call configure_build,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=$(BUILD_TYPE))

demo: build
	@if [ ! -x $(BUILD_DIR)/examples/demo ]; then \
	  echo "make demo: $(BUILD_DIR)/examples/demo was not built (is there an examples/demo.c yet?)" >&2; \
	  exit 1; \
	fi
	./$(BUILD_DIR)/examples/demo

test: build
	$(call run_ctest,$(BUILD_DIR),)

# The project's own code must be clean under its own checker: every test
# passes with ACLSIM_CHECK=1 and nothing prints a report ("aclsim check:").
# test-checker, test-checker-* and ascendc-check provoke reports on purpose
# and set ACLSIM_CHECK themselves.
check-mode: CTEST_ARGS += -E '^(test-checker(-.*)?|ascendc-check)$$'
check-mode: build
	$(call run_ctest,$(BUILD_DIR),ACLSIM_CHECK=1)
	@n=$$(grep -c '^aclsim check:' $(BUILD_DIR)/Testing/Temporary/LastTest.log || true); \
	if [ "$$n" != 0 ]; then \
	  grep '^aclsim check:' $(BUILD_DIR)/Testing/Temporary/LastTest.log | head -n 20; \
	  echo "make check-mode: $$n checker report(s) in the test-suite"; exit 1; fi; \
	echo "make check-mode: no checker report"

asan: deps
	$(call configure_build,$(ASAN_DIR),-DCMAKE_BUILD_TYPE=Debug \
	  "-DCMAKE_C_FLAGS=$(ASAN_FLAGS)" "-DCMAKE_CXX_FLAGS=$(ASAN_FLAGS)")
	$(call run_ctest,$(ASAN_DIR),ASAN_OPTIONS=$(ASAN_OPTIONS) UBSAN_OPTIONS=$(UBSAN_OPTIONS) $(NO_ASLR))

tsan: deps
	$(call configure_build,$(TSAN_DIR),-DCMAKE_BUILD_TYPE=Debug \
	  "-DCMAKE_C_FLAGS=$(TSAN_FLAGS)" "-DCMAKE_CXX_FLAGS=$(TSAN_FLAGS)")
	$(call run_ctest,$(TSAN_DIR),"TSAN_OPTIONS=$(TSAN_OPTIONS)" $(NO_ASLR))

release:
	@bash scripts/deps.sh
	$(call configure_build,$(RELEASE_DIR),-DCMAKE_BUILD_TYPE=Release -DACLSIM_BUILD_TESTS=OFF)

bench:
	@bash scripts/deps.sh
	$(call configure_build,$(RELEASE_DIR),-DCMAKE_BUILD_TYPE=Release -DACLSIM_BUILD_TESTS=OFF)
	@if [ -x $(RELEASE_DIR)/bench/aclsim-bench ]; then \
	  ./$(RELEASE_DIR)/bench/aclsim-bench $(BENCH_ARGS); \
	  if [ -x $(RELEASE_DIR)/bench/aclsim-bench-vector ]; then \
	    ./$(RELEASE_DIR)/bench/aclsim-bench-vector; \
	  fi; \
	else \
	  echo "make bench: no benchmark yet ($(RELEASE_DIR)/bench/aclsim-bench not built; add bench/*.c)"; \
	fi

# The "off vs on" table of docs/performance.md: the same Release build run
# with ACLSIM_CHECK unset, then set to $(BENCH_CHECK); the JSON files stay in
# build-release/ (bench-off.json, bench-check-<BENCH_CHECK>.json).
bench-check:
	@bash scripts/deps.sh
	$(call configure_build,$(RELEASE_DIR),-DCMAKE_BUILD_TYPE=Release -DACLSIM_BUILD_TESTS=OFF)
	env -u ACLSIM_CHECK ./$(RELEASE_DIR)/bench/aclsim-bench $(BENCH_ARGS) \
	  --json $(RELEASE_DIR)/bench-off.json
	env ACLSIM_CHECK=$(BENCH_CHECK) ./$(RELEASE_DIR)/bench/aclsim-bench $(BENCH_ARGS) \
	  --json $(RELEASE_DIR)/bench-check-$(BENCH_CHECK).json
	@echo
	@echo "== checking off vs ACLSIM_CHECK=$(BENCH_CHECK)"
	python3 bench/compare --labels off,on $(RELEASE_DIR)/bench-off.json \
	  $(RELEASE_DIR)/bench-check-$(BENCH_CHECK).json

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(RELEASE_DIR)
