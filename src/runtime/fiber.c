/*
 * Fibers: stacks on which kernel blocks can be suspended and resumed on the
 * same worker thread (Ascend C's SyncAll, kernel-block.c). A fiber is a stack from
 * a process-wide pool and a saved context (below: a few instructions on
 * x86-64, swapcontext elsewhere); stacks are mapped in slabs with a
 * guard page below each and kept for the process's lifetime (their untouched
 * pages cost no memory). Switches are annotated for AddressSanitizer and
 * ThreadSanitizer, so both follow the stacks.
 */
#include "internal.h"

#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FIBER_TSAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* Sanitizer builds use much larger frames. */
#if defined(FIBER_ASAN) || defined(FIBER_TSAN)
#define FIBER_STACK (1024u * 1024u)
#else
#define FIBER_STACK (256u * 1024u)
#endif
#define FIBER_SLAB 16u

/* The switch itself. On x86-64 a few instructions that save the callee-saved
 * registers and the floating-point control words on the stack and change
 * stacks (no system call, unlike swapcontext, which saves the signal mask);
 * elsewhere swapcontext. */
#if defined(__x86_64__) && !defined(ACLSIM_FIBER_UCONTEXT)
#define FIBER_ASM 1
void aclsim__fiber_swap(void **save_sp, void *new_sp);
__asm__(".text\n"
        ".globl aclsim__fiber_swap\n"
        ".hidden aclsim__fiber_swap\n"
        ".type aclsim__fiber_swap, @function\n"
        "aclsim__fiber_swap:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size aclsim__fiber_swap, .-aclsim__fiber_swap\n");

/* A new stack whose first switch "returns" into entry, as if called. */
static void *initial_sp(void *stack, size_t size, void (*entry)(void))
{
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)top;
    *--sp = 0;                          /* entry's return address: it never returns */
    *--sp = (uint64_t)(uintptr_t)entry; /* where ret goes */
    for (int i = 0; i < 6; i++)
        *--sp = 0;                      /* rbp, rbx, r12-r15 */
    uint32_t mxcsr;
    uint16_t fcw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fcw));
    *--sp = (uint64_t)mxcsr | (uint64_t)fcw << 32;
    return sp;
}
#endif

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__fiber *pool;   /* free fibers (each with its stack) */

static bool pool_grow(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t each = FIBER_STACK + page;
    char *base = mmap(NULL, each * FIBER_SLAB, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return false;
    struct aclsim__fiber *f = aclsim__calloc(FIBER_SLAB, sizeof *f);
    if (!f) {
        munmap(base, each * FIBER_SLAB);
        return false;
    }
    for (unsigned i = 0; i < FIBER_SLAB; i++) {
        char *lo = base + i * each;
        mprotect(lo, page, PROT_NONE);   /* guard: a stack overflow faults */
        f[i].stack = lo + page;
        f[i].stack_size = FIBER_STACK;
        f[i].pool_next = pool;
        pool = &f[i];
    }
    return true;
}

/* The fiber that switched to the running one (for ASan's bookkeeping). */
static _Thread_local struct aclsim__fiber *tls_switched_from;

void aclsim__fiber_native(struct aclsim__fiber *f)
{
    memset(f, 0, sizeof *f);
#ifdef FIBER_TSAN
    f->tsan = __tsan_get_current_fiber();
#endif
}

struct aclsim__fiber *aclsim__fiber_new(void (*entry)(void))
{
    pthread_mutex_lock(&pool_lock);
    if (!pool && !pool_grow()) {
        pthread_mutex_unlock(&pool_lock);
        return NULL;
    }
    struct aclsim__fiber *f = pool;
    pool = f->pool_next;
    pthread_mutex_unlock(&pool_lock);
#ifdef FIBER_ASAN
    /* frames of the stack's previous use may have left poisoned shadow */
    __asan_unpoison_memory_region(f->stack, f->stack_size);
#endif
#ifdef FIBER_ASM
    f->sp = initial_sp(f->stack, f->stack_size, entry);
#else
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack;
    f->ctx.uc_stack.ss_size = f->stack_size;
    f->ctx.uc_link = NULL;   /* entry never returns */
    makecontext(&f->ctx, entry, 0);
#endif
    f->asan_fake = NULL;
    f->next = NULL;
#ifdef FIBER_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
    return f;
}

void aclsim__fiber_free(struct aclsim__fiber *f)
{
#ifdef FIBER_TSAN
    __tsan_destroy_fiber(f->tsan);
    f->tsan = NULL;
#endif
    pthread_mutex_lock(&pool_lock);
    f->pool_next = pool;
    pool = f;
    pthread_mutex_unlock(&pool_lock);
}

/* After arriving on a stack: ASan learns which stack it left (and, the first
 * time, the bounds of a thread's own stack). */
static void arrived(struct aclsim__fiber *self)
{
#ifdef FIBER_ASAN
    struct aclsim__fiber *prev = tls_switched_from;
    const void *bottom = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(self ? self->asan_fake : NULL, &bottom, &size);
    if (prev && !prev->stack) {
        prev->bottom = bottom;
        prev->size = size;
    }
#else
    (void)self;
#endif
    tls_switched_from = NULL;
}

void aclsim__fiber_started(void)
{
    arrived(NULL);
}

void aclsim__fiber_switch(struct aclsim__fiber *from, struct aclsim__fiber *to, bool from_ends)
{
    tls_switched_from = from;
#ifdef FIBER_ASAN
    __sanitizer_start_switch_fiber(from_ends ? NULL : &from->asan_fake,
                                   to->stack ? to->stack : to->bottom,
                                   to->stack ? to->stack_size : to->size);
#else
    (void)from_ends;
#endif
#ifdef FIBER_TSAN
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
#ifdef FIBER_ASM
    aclsim__fiber_swap(&from->sp, to->sp);
#else
    swapcontext(&from->ctx, &to->ctx);
#endif
    arrived(from);
}

/* After fork(), in the child (internal.h, THE FORK RULE): the pool's lock
 * may have been held by a thread that does not exist in the child. */
void aclsim__fibers_forget_after_fork(void)
{
    pthread_mutex_init(&pool_lock, NULL);
}
