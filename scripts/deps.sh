#!/usr/bin/env bash
# scripts/deps.sh [fuzz] -- make sure the Debian/Ubuntu packages aclsim needs
# are installed.  Installs only what is missing (apt-get update once, then
# apt-get install -y --no-install-recommends), as root or through sudo.
# Prints nothing when everything is already present.
#
#   default: libcjson-dev libcmocka-dev pkg-config g++ (g++ for the Ascend C
#            layer, aclsim-cc and the "public headers compile as C++" check)
#   fuzz:    additionally clang libclang-rt-14-dev
#
# Waits (up to $ACLSIM_APT_LOCK_TIMEOUT seconds, default 120) for a dpkg/apt
# lock held by another apt process instead of failing.
set -euo pipefail

want_fuzz=0
for arg in "$@"; do
  case "$arg" in
    fuzz) want_fuzz=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "deps.sh: unknown argument '$arg' (usage: deps.sh [fuzz])" >&2; exit 2 ;;
  esac
done

lock_timeout="${ACLSIM_APT_LOCK_TIMEOUT:-120}"
multiarch="$(gcc -print-multiarch 2>/dev/null || true)"

dpkg_installed() {
  command -v dpkg-query >/dev/null 2>&1 &&
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

have_header() {   # have_header <relative header path>
  local d
  for d in /usr/include /usr/local/include ${multiarch:+/usr/include/$multiarch}; do
    [[ -f "$d/$1" ]] && return 0
  done
  return 1
}

have_lib() {      # have_lib <libname without lib prefix / .so>
  local d
  for d in /usr/lib ${multiarch:+/usr/lib/$multiarch} /usr/lib64 /usr/local/lib; do
    [[ -e "$d/lib$1.so" ]] && return 0
  done
  return 1
}

# is_present <package>: true if the package (or an equivalent) is available.
is_present() {
  case "$1" in
    libcjson-dev)   dpkg_installed "$1" || { have_header cjson/cJSON.h && have_lib cjson; } ;;
    libcmocka-dev)  dpkg_installed "$1" || { have_header cmocka.h && have_lib cmocka; } ;;
    pkg-config)     command -v pkg-config >/dev/null 2>&1 ;;
    g++)            command -v g++ >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1 ;;
    clang)          command -v clang >/dev/null 2>&1 || command -v clang-14 >/dev/null 2>&1 ;;
    libclang-rt-14-dev)
      dpkg_installed "$1" || compgen -G '/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a' >/dev/null ;;
    *)              dpkg_installed "$1" ;;
  esac
}

packages=(libcjson-dev libcmocka-dev pkg-config g++)
if (( want_fuzz )); then
  packages+=(clang libclang-rt-14-dev)
fi

missing_packages() {
  local p out=()
  for p in "${packages[@]}"; do
    is_present "$p" || out+=("$p")
  done
  echo "${out[*]:-}"
}

read -r -a missing <<<"$(missing_packages)"
(( ${#missing[@]} == 0 )) && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps.sh: missing: ${missing[*]}" >&2
  echo "deps.sh: apt-get not available; install the equivalents of these packages manually." >&2
  exit 1
fi

if [[ $(id -u) -eq 0 ]]; then
  as_root=(env DEBIAN_FRONTEND=noninteractive)
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
else
  echo "deps.sh: missing packages: ${missing[*]}" >&2
  echo "deps.sh: not root and no sudo; please run as root:" >&2
  echo "    apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

apt_opts=(-q -o "DPkg::Lock::Timeout=${lock_timeout}")

# run_apt <args...>: retry while another process holds the apt/dpkg locks
# (DPkg::Lock::Timeout covers the dpkg lock; the retry loop also covers the
# lists lock taken by a concurrent `apt-get update`).
run_apt() {
  local deadline=$(( SECONDS + lock_timeout )) log rc
  log="$(mktemp)"
  while :; do
    rc=0
    "${as_root[@]}" apt-get "${apt_opts[@]}" "$@" >"$log" 2>&1 || rc=$?
    if (( rc == 0 )); then rm -f "$log"; return 0; fi
    if grep -qiE 'could not get lock|unable to acquire|unable to lock|is another process using it' "$log" &&
       (( SECONDS < deadline )); then
      sleep 3
      continue
    fi
    cat "$log" >&2
    rm -f "$log"
    return "$rc"
  done
}

echo "deps.sh: installing: ${missing[*]}"
run_apt update
# Another apt process may have installed some of them meanwhile.
read -r -a missing <<<"$(missing_packages)"
if (( ${#missing[@]} > 0 )); then
  run_apt install -y --no-install-recommends "${missing[@]}"
fi

read -r -a still <<<"$(missing_packages)"
if (( ${#still[@]} > 0 )); then
  echo "deps.sh: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "deps.sh: done."
