/*
 * Device variables defined in a second translation unit, for
 * tests/test-symbol-types.c (ACLSIM_DEVICE_VAR_EXTERN and plain `extern`).
 *
 * This file lives in the static helper library: it is linked into a test only
 * when that test references one of its symbols, and then every variable here
 * is registered (the whole object is pulled in).
 */
#include <stdint.h>

#include "aclsim/aclsim.h"

/* Declared with ACLSIM_DEVICE_VAR_EXTERN in the test. */
ACLSIM_DEVICE_VAR(int32_t, hsym_ext_counter, ) = 77; enum { HSYM_EXT_COUNTER_LINE = __LINE__ };
ACLSIM_DEVICE_VAR(float, hsym_ext_table, [8]) = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};

/* Declared with a plain `extern double hsym_plain_ext[4];` in the test. */
ACLSIM_DEVICE_VAR(double, hsym_plain_ext, [4]) = {1.25, 2.5, 3.75, 5.0};

/* A file-static device variable with the same name as one in the test: the
 * two are different variables with different instances. */
ACLSIM_DEVICE_VAR_STATIC(int32_t, hsym_same_name, ) = 2002;

/* The line of hsym_ext_counter's definition, for message checks. */
int hsym_ext_counter_line(void);
int hsym_ext_counter_line(void) { return HSYM_EXT_COUNTER_LINE; }

/* The symbol (host object address) of this file's hsym_same_name. */
const void *hsym_same_name_in_helper(void);
const void *hsym_same_name_in_helper(void) { return &hsym_same_name; }

/* Reads this file's hsym_same_name on the device the calling kernel runs on
 * (ACLSIM_DEV on a static variable from another file, through a function). */
int32_t hsym_same_name_dev_read(void);
int32_t hsym_same_name_dev_read(void) { return ACLSIM_DEV(hsym_same_name); }
