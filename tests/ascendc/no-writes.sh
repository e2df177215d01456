#!/bin/sh
# aclsim-cc writes nothing into the source folder (read-only here), quoted
# includes next to the source still work, the dependency file names the
# source (not the temporary copy), and no temporary directory is left.
# Usage: no-writes.sh <aclsim-cc> <tests/ascendc source dir> <work dir>
set -eu
acc=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work/src" "$work/out" "$work/tmp"
cp "$src/basic.asc" "$src/basic_helper.h" "$work/src/"
chmod a-w "$work/src"
trap 'chmod u+w "$work/src"' EXIT
before=$(ls -la "$work/src" | sort)
TMPDIR="$work/tmp" "$acc" -MD -c "$work/src/basic.asc" -o "$work/out/basic.o"
after=$(ls -la "$work/src" | sort)
[ "$before" = "$after" ] || { echo "the source folder changed"; exit 1; }
[ -s "$work/out/basic.o" ] || { echo "no object"; exit 1; }
grep -q "$work/src/basic.asc" "$work/out/basic.d" || { echo "depfile lacks the source"; exit 1; }
grep -q "basic_helper.h" "$work/out/basic.d" || { echo "depfile lacks the quoted include"; exit 1; }
if grep -q "aclsim-cc\." "$work/out/basic.d"; then echo "depfile names the temporary copy"; exit 1; fi
[ -z "$(ls -A "$work/tmp")" ] || { echo "temporary files left: $(ls -A "$work/tmp")"; exit 1; }
echo "no-writes: ok"
