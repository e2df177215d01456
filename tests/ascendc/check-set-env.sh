#!/usr/bin/env bash
# check-set-env.sh PREFIX WORKDIR -- the install layout of docs/ascendc.md:
# set_env.sh of a MOVED copy of the install (it must find itself), the
# variables it exports, CANN's library names, the relocatable ascendcl.pc.
set -u
prefix="$1" work="$2"
fail() { echo "check-set-env: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cp -a "$prefix" "$work/moved" || fail "cannot copy $prefix"
moved="$(cd "$work/moved" && pwd)"

unset ASCEND_CANN_PACKAGE_PATH ASCEND_HOME_PATH ASCENDC_CMAKE_DIR SOC_VERSION CMAKE_TOOLCHAIN_FILE \
      CMAKE_PREFIX_PATH PKG_CONFIG_PATH
export LD_LIBRARY_PATH=/nonexistent
source "$moved/set_env.sh"
rc=$?
[ $rc -eq 0 ] || fail "sourcing set_env.sh returned $rc"
[ "$ASCEND_CANN_PACKAGE_PATH" = "$moved" ] || fail "ASCEND_CANN_PACKAGE_PATH=$ASCEND_CANN_PACKAGE_PATH, expected $moved"
[ "$ASCEND_HOME_PATH" = "$moved" ] || fail "ASCEND_HOME_PATH=$ASCEND_HOME_PATH"
[ "$ASCENDC_CMAKE_DIR" = "$moved/compiler/tikcpp/ascendc_kernel_cmake" ] || fail "ASCENDC_CMAKE_DIR=$ASCENDC_CMAKE_DIR"
[ -f "$ASCENDC_CMAKE_DIR/ascendc.cmake" ] || fail "no ascendc.cmake in ASCENDC_CMAKE_DIR"
[ "$SOC_VERSION" = "Ascend910B1" ] || fail "SOC_VERSION=$SOC_VERSION, expected the default Ascend910B1"
case ":$PATH:" in *":$moved/bin:"*) ;; *) fail "PATH lacks $moved/bin" ;; esac
[ "$LD_LIBRARY_PATH" = "$moved/lib64:/nonexistent" ] || fail "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
source "$moved/set_env.sh"
[ "$LD_LIBRARY_PATH" = "$moved/lib64:/nonexistent" ] || fail "sourcing twice repeats entries: $LD_LIBRARY_PATH"
SOC_VERSION=Ascend310P3 bash -c "source '$moved/set_env.sh' && [ \"\$SOC_VERSION\" = Ascend310P3 ]" \
    || fail "set_env.sh overrides a SOC_VERSION that was set"
[ -f "$ASCEND_CANN_PACKAGE_PATH/include/acl/acl.h" ] || fail "no include/acl/acl.h"
for lib in ascendcl acl_rt runtime; do
    [ -e "$ASCEND_CANN_PACKAGE_PATH/lib64/lib$lib.so" ] || fail "no lib64/lib$lib.so"
done

# Relocatable pkg-config file; a program linked with each library name loads
# one runtime (libascendcl's SONAME).
if command -v pkg-config > /dev/null; then
    pc_prefix="$(pkg-config --variable=prefix ascendcl)" || fail "pkg-config does not find ascendcl"
    [ "$(cd "$pc_prefix" && pwd)" = "$moved" ] || fail "ascendcl.pc prefix is $pc_prefix, not the moved $moved"
    flags="$(pkg-config --cflags --libs ascendcl)"
else
    flags="-I$moved/include -L$moved/lib64 -lascendcl"
fi
cat > "$work/t.c" <<'EOC'
#include <stdio.h>
#include "acl/acl.h"
int main(void)
{
    aclError e = aclInit(NULL);
    const char *soc = aclrtGetSocName();
    printf("aclInit %d, SoC %s\n", (int)e, soc ? soc : "(null)");
    return e != ACL_SUCCESS || aclFinalize() != ACL_SUCCESS;
}
EOC
for lib in ascendcl acl_rt runtime; do
    # shellcheck disable=SC2086
    cc ${CFLAGS:-} "$work/t.c" -o "$work/t-$lib" $flags -l$lib ${LDFLAGS:-} || fail "cannot link with -l$lib"
    "$work/t-$lib" || fail "the program linked with -l$lib fails"
done
echo "check-set-env: ok ($moved)"
rm -rf "$work"
