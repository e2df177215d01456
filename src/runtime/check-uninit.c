/*
 * Checker mode, uninit detector (docs/checker.md): reads of device memory
 * that nothing has written.
 *
 * aclrtMalloc memory (and its variants') of up to FILL_MAX bytes is filled,
 * when allocated, with a pattern no computation is likely to produce: the
 * 16-bit word 0xffa5 over and over, a NaN as fp16, bf16 and fp32. Whoever
 * writes it -- a copy, a memset, a kernel, a host function -- changes it. A
 * device-to-host or device-to-device copy whose source still holds the
 * pattern in an aligned 8-byte word reads bytes nothing wrote: the copy is
 * reported (an asynchronous one as its stream's fault, 507015 at the next
 * synchronize; a synchronous one returns 507015), and still done.
 *
 * Device variables are not tracked (without an initializer they are zero),
 * nor page-locked memory (the host writes it directly), nor memory the
 * runtime allocates for itself. A program that writes the pattern itself
 * and reads it back would be reported: a run of at least 8 bytes of it is
 * needed, aligned as the allocation.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define FILL_MAX ((size_t)64 << 20)
static const uint64_t PATTERN = 0xffa5ffa5ffa5ffa5ull;

static bool tracked(const struct aclsim__alloc *a)
{
    return a->kind == ACLSIM_ALLOC_MALLOC && a->site_api && a->lead && a->size <= FILL_MAX;
}

void aclsim__check_fill(const struct aclsim__alloc *a)
{
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_UNINIT) || !tracked(a))
        return;
    size_t words = a->size / 8;
    uint64_t *p = (uint64_t *)a->addr;   /* addr is 64-byte aligned */
    for (size_t i = 0; i < words; i++)
        p[i] = PATTERN;
    memcpy((char *)a->addr + words * 8, &PATTERN, a->size % 8);
}

/* Whether the bytes [x, x + n) of word-aligned x hold the pattern (addr
 * is 64-byte aligned, so the pattern's bytes alternate a5 ff from there). */
static bool pattern_at(uintptr_t x, size_t n)
{
    if (n == 8) {
        uint64_t v;
        memcpy(&v, (const void *)x, 8);
        return v == PATTERN;
    }
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)x)[i] != (((x + i) & 1) ? 0xffu : 0xa5u))
            return false;
    return true;
}

bool aclsim__check_unwritten(const struct aclsim__alloc *a, uintptr_t lo, uintptr_t hi,
                             bool words, uintptr_t *first, uintptr_t *last)
{
    if (!tracked(a))
        return false;
    uintptr_t end = a->addr + a->size;
    if (hi > end)
        hi = end;
    if (lo < a->addr)
        lo = a->addr;
    uintptr_t from = words ? (lo + 7) & ~(uintptr_t)7 : lo & ~(uintptr_t)7;
    *first = *last = 0;
    for (uintptr_t x = from; x < hi && (!words || x + 8 <= hi); x += 8) {
        uintptr_t w_end = x + 8 < end ? x + 8 : end;   /* (the allocation's last word) */
        if (!pattern_at(x, w_end - x)) {
            if (*first)
                break;   /* the first run of unwritten words */
            continue;
        }
        if (!*first)
            *first = x > lo ? x : lo;
        *last = w_end < hi ? w_end : hi;
    }
    return *first != 0;
}

/* Whether [src, src + n) holds an aligned word of the pattern inside a
 * tracked allocation; *what says which bytes of which allocation. */
static bool unwritten(const void *src, size_t n, char *what, size_t len)
{
    struct aclsim__where w = aclsim__classify(src);
    struct aclsim__alloc a;
    uintptr_t first, last;
    if (w.kind != ACLSIM_DEVICE || !aclsim__heap_find(&w.device->heap, src, &a) ||
        !aclsim__check_unwritten(&a, (uintptr_t)src, (uintptr_t)src + n, true, &first, &last))
        return false;
    char alloc[600];
    aclsim__check_describe_alloc(&a, w.device->id, alloc, sizeof alloc);
    snprintf(what, len, "reads bytes %zu to %zu of %s, which nothing has written (allocation "
             "contents are undefined on an NPU)", (size_t)(first - a.addr),
             (size_t)(last - a.addr - 1), alloc);
    return true;
}

void aclsim__check_copy_run(struct aclsim__stream *s, struct aclsim__task *t)
{
    char what[800];
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_UNINIT) || !unwritten(t->u.copy.src, t->bytes, what, sizeof what))
        return;
    struct aclsim__fault_detail d = {.args = NULL};
    char stream[64], text[1000];
    aclsim__check_stream_name(s->is_default, s->handle, s->id, stream, sizeof stream);
    snprintf(text, sizeof text, "copy (task %u) on %s of device %d %s", t->id, stream,
             s->device->id, what);
    aclsim__check_print("uninit", text);
    snprintf(d.why, sizeof d.why, "aclsim check: uninit: %.220s", text);
    aclsim__task_failed(s, t, ACL_ERROR_RT_AICORE_EXCEPTION, &d);
}

aclError aclsim__check_copy_sync(const char *api, const void *src, size_t n)
{
    char what[800], text[1000];
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_UNINIT) || !unwritten(src, n, what, sizeof what))
        return ACL_SUCCESS;
    snprintf(text, sizeof text, "%s %s", api, what);
    aclsim__check_print("uninit", text);
    return aclsim__fail(ACL_ERROR_RT_AICORE_EXCEPTION, api, "aclsim check: uninit: %s", text);
}
