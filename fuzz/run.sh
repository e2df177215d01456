#!/usr/bin/env bash
# fuzz/run.sh [RUNS] -- build the libFuzzer harness and run it, bounded.
#
#   1. installs clang + libclang-rt-14-dev if missing (scripts/deps.sh fuzz);
#   2. builds fuzz-runtime (standalone CMake project fuzz/, clang, ASan+UBSan)
#      in $FUZZ_BUILD_DIR (default build-fuzz/ at the top of the tree);
#   3. replays every file in fuzz/regressions/ once (inputs that once crashed);
#   4. fuzzes a temporary copy of fuzz/corpus/ (the committed corpus is never
#      modified) for RUNS executions, capped at FUZZ_MAX_TIME seconds;
#   5. prints the number of executions and exits non-zero on any crash,
#      sanitizer report, invariant violation or hang (-timeout).
#
# Settings (argument wins over environment):
#   RUNS / FUZZ_RUNS           executions (default 70000: 2-3 minutes on 2 cores)
#   FUZZ_MAX_TIME              wall-clock cap in seconds (default 240)
#   FUZZ_BUILD_DIR             build directory (default <repo>/build-fuzz)
#   FUZZ_ARTIFACTS             where crash/timeout inputs are written
#                              (default $FUZZ_BUILD_DIR/artifacts)
#   FUZZ_KEEP_CORPUS=DIR       fuzz DIR in place instead of a temporary copy
#                              (grows it; use for long runs, see docs/fuzzing.md)
#   FUZZ_EXTRA_ARGS            more libFuzzer flags, e.g. "-jobs=2 -workers=2"
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

runs="${1:-${FUZZ_RUNS:-70000}}"
max_time="${FUZZ_MAX_TIME:-240}"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
artifacts="${FUZZ_ARTIFACTS:-$build/artifacts}"
if ! [[ "$runs" =~ ^[0-9]+$ && "$max_time" =~ ^[0-9]+$ ]]; then
  echo "fuzz/run.sh: RUNS and FUZZ_MAX_TIME must be numbers (got '$runs', '$max_time')" >&2
  exit 2
fi

# 1. toolchain
bash "$root/scripts/deps.sh" fuzz
cc="$(command -v clang || command -v clang-14 || true)"
if [[ -z "$cc" ]]; then
  echo "fuzz/run.sh: clang not found after scripts/deps.sh fuzz" >&2
  exit 1
fi

# 2. build
cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${JOBS:-2}"
bin="$build/fuzz-runtime"
mkdir -p "$artifacts"

# The sanitizer runtimes may reject high-entropy ASLR layouts; run without ASLR
# when the kernel or container allows it.
norandom=()
if setarch "$(uname -m)" -R true >/dev/null 2>&1; then
  norandom=(setarch "$(uname -m)" -R)
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
unset FUZZ_TRACE
common=(-timeout=30 -rss_limit_mb=2048 -max_len=2048 -artifact_prefix="$artifacts/")

# 3. regressions: each file once, as a plain input
regressions=()
for f in "$here"/regressions/*; do
  [[ -f "$f" && "$f" != *.md ]] && regressions+=("$f")
done
if (( ${#regressions[@]} > 0 )); then
  echo "fuzz/run.sh: replaying ${#regressions[@]} regression input(s)"
  if ! "${norandom[@]}" "$bin" "${common[@]}" "${regressions[@]}" >"$build/regressions.log" 2>&1; then
    cat "$build/regressions.log" >&2
    echo "fuzz/run.sh: FAILED: a regression input crashes again (see above)" >&2
    exit 1
  fi
fi

# 4. fuzz a copy of the corpus
if [[ -n "${FUZZ_KEEP_CORPUS:-}" ]]; then
  corpus="$FUZZ_KEEP_CORPUS"
  mkdir -p "$corpus"
  cp -n "$here"/corpus/* "$corpus"/ 2>/dev/null || true
  cleanup() { :; }
else
  corpus="$(mktemp -d "${TMPDIR:-/tmp}/aclsim-fuzz-corpus.XXXXXX")"
  cp "$here"/corpus/* "$corpus"/
  cleanup() { rm -rf "$corpus"; }
fi
trap cleanup EXIT

log="$build/fuzz.log"
echo "fuzz/run.sh: fuzzing $runs executions (at most ${max_time}s) from $(ls "$corpus" | wc -l) seed(s)"
rc=0
# shellcheck disable=SC2086  # FUZZ_EXTRA_ARGS is a list of flags
"${norandom[@]}" "$bin" "${common[@]}" -runs="$runs" -max_total_time="$max_time" \
  -print_final_stats=1 ${FUZZ_EXTRA_ARGS:-} "$corpus" >"$log" 2>&1 || rc=$?

# 5. report
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$log" | sed 's/^/  /' || true
execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 || true)"
if (( rc != 0 )); then
  grep -v ' # Uses: ' "$log" | tail -n 60 >&2
  echo "fuzz/run.sh: FAILED (libFuzzer exit $rc) after ${execs:-?} executions;" \
       "the crashing input is in $artifacts/ (replay: $bin <file>, FUZZ_TRACE=1 for a call trace)" >&2
  exit "$rc"
fi
echo "fuzz/run.sh: OK: ${execs:-?} executions, ${speed:-?} exec/s, ${cov:-cov: ?}, no crash (log: $log)"
