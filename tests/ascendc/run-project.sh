#!/usr/bin/env bash
# run-project.sh -- builds and runs an Ascend C project as a user would:
# source <prefix>/set_env.sh, configure with NO -D option, build, run.
#
#   run-project.sh [options] PREFIX PROJECT_DIR BUILD_DIR [-- PROGRAM [ARGS...]]
#
#   PREFIX        an aclsim install prefix (the build's staged install)
#   PROJECT_DIR   the project's sources (nothing is written there)
#   BUILD_DIR     removed and recreated (kept with --keep: an incremental build)
#   PROGRAM       run in BUILD_DIR after the build (relative to it)
# options:
#   --soc SOC        SOC_VERSION for the build (else set_env.sh's default)
#   --keep           keep BUILD_DIR from a previous run
#   --install        also `cmake --install BUILD_DIR --prefix BUILD_DIR/out`
#   --expect-exit N  the program must exit with status N (default 0)
#   --expect-output REGEX  the program's output (stdout+stderr) must match
# The environment may give CXXFLAGS/ASCFLAGS/LDFLAGS (sanitizer builds);
# EXPECT_* variables pass through to the program.
set -u
soc="" keep=0 install=0 expect_exit=0 expect_output=""
while [ $# -gt 0 ]; do
    case "$1" in
        --soc) soc="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        --install) install=1; shift ;;
        --expect-exit) expect_exit="$2"; shift 2 ;;
        --expect-output) expect_output="$2"; shift 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 3 ]; then
    echo "usage: run-project.sh [options] PREFIX PROJECT_DIR BUILD_DIR [-- PROGRAM [ARGS...]]" >&2
    exit 2
fi
prefix="$1" project="$2" build="$3"
shift 3
[ "${1:-}" = "--" ] && shift

# A clean environment: only what set_env.sh exports describes the install.
unset ASCEND_CANN_PACKAGE_PATH ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCENDC_CMAKE_DIR \
      CMAKE_TOOLCHAIN_FILE CMAKE_PREFIX_PATH ASC SOC_VERSION ACLSIM_SOC_VERSION
[ -n "$soc" ] && export SOC_VERSION="$soc"

# shellcheck disable=SC1091
source "$prefix/set_env.sh"
rc=$?
if [ $rc -ne 0 ]; then
    echo "run-project.sh: sourcing $prefix/set_env.sh returned $rc" >&2
    exit 1
fi

# Builds run aclsim-cc, which in sanitizer builds is instrumented too: a
# compiler driver keeps what it allocates until it exits, so leak checking is
# off while building (the program still runs with the caller's ASAN_OPTIONS).
building() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }

[ $keep -eq 1 ] || rm -rf "$build"
mkdir -p "$build"
echo "== configure $project (SOC_VERSION=$SOC_VERSION)"
building cmake -S "$project" -B "$build" > "$build/configure.log" 2>&1 || {
    cat "$build/configure.log"; echo "run-project.sh: configure failed" >&2; exit 1; }
echo "== build"
building cmake --build "$build" -j "${JOBS:-2}" > "$build/build.log" 2>&1 || {
    cat "$build/build.log"; echo "run-project.sh: build failed" >&2; exit 1; }
if [ $install -eq 1 ]; then
    echo "== install"
    building cmake --install "$build" --prefix "$build/out" > "$build/install.log" 2>&1 || {
        cat "$build/install.log"; echo "run-project.sh: install failed" >&2; exit 1; }
fi
[ $# -eq 0 ] && exit 0

echo "== run $*"
cd "$build" || exit 1
out="$("./$@" 2>&1)"
status=$?
printf '%s\n' "$out"
if [ "$status" -ne "$expect_exit" ]; then
    echo "run-project.sh: $1 exited with status $status, expected $expect_exit" >&2
    exit 1
fi
if [ -n "$expect_output" ] && ! printf '%s\n' "$out" | grep -Eq -- "$expect_output"; then
    echo "run-project.sh: the output does not match /$expect_output/" >&2
    exit 1
fi
echo "== ok"
