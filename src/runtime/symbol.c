/*
 * Device variables: the registry of aclsimVar descriptors (filled before main
 * by the ACLSIM_DEVICE_VAR constructors, and by dlopen of kernel binaries),
 * their per-device instances, and the six CANN symbol functions.
 *
 * An instance is a device allocation (counted in the device's memory, 64-byte
 * aligned or more) made on first use on that device, initialised from the
 * host object's initial contents. var->instance[d] is written once under
 * aclsim__registry_lock and read without a lock afterwards; it goes back to
 * NULL only when device d closes (its heap, and every instance, goes away)
 * or the variable is unregistered. The rules that make this safe against
 * resets, aclFinalize and binary unloads are R1-R3 (registration by address)
 * and I1-I4 (instances and device lifetime) below; internal.h sums them up.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- address map --------------------------------------------------------- */

#define TOMBSTONE ((uintptr_t)1)
#define MAP_MIN 1024u

static size_t slot_of(const struct aclsim__addr_table *t, uintptr_t k)
{
    return (size_t)((k >> 4) * 0x9E3779B97F4A7C15ull) & t->mask;
}

static struct aclsim__addr_table *table_new(size_t capacity)
{
    struct aclsim__addr_table *t =
        aclsim__calloc(1, sizeof *t + capacity * sizeof(struct aclsim__addr_slot));
    if (t)
        t->mask = capacity - 1;
    return t;
}

static void table_put(struct aclsim__addr_table *t, uintptr_t k, void *value)
{
    size_t i = slot_of(t, k);
    for (;;) {
        uintptr_t sk = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
        if (sk == 0 || sk == TOMBSTONE)
            break;
        i = (i + 1) & t->mask;
    }
    atomic_store_explicit(&t->slots[i].value, value, memory_order_relaxed);
    atomic_store_explicit(&t->slots[i].key, k, memory_order_release);
}

/* Caller holds m->lock. Grows (or cleans) the table so one more key fits at a
 * load of at most 1/2. Readers may still be probing the old table: it is kept
 * on the retired list (and told about removals) until the process ends. */
static bool map_reserve(struct aclsim__addr_map *m)
{
    struct aclsim__addr_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    size_t capacity = t ? t->mask + 1 : 0;
    if (t && (m->count + m->tombstones + 1) * 2 <= capacity)
        return true;
    size_t want = MAP_MIN;
    while ((m->count + 1) * 4 > want)
        want *= 2;
    struct aclsim__addr_table *bigger = table_new(want);
    struct aclsim__retired *r = t ? aclsim__malloc(sizeof *r) : NULL;
    if (!bigger || (t && !r)) {
        free(bigger);
        free(r);
        return false;
    }
    for (size_t i = 0; t && i <= t->mask; i++) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
        if (k > TOMBSTONE)
            table_put(bigger, k, atomic_load_explicit(&t->slots[i].value, memory_order_relaxed));
    }
    m->tombstones = 0;
    atomic_store_explicit(&m->table, bigger, memory_order_release);
    if (t) {
        r->table = t;
        r->next = m->retired;
        m->retired = r;
    }
    return true;
}

/* Caller holds m->lock. */
bool aclsim__map_insert(struct aclsim__addr_map *m, const void *key, void *value)
{
    if (!map_reserve(m))
        return false;
    table_put(atomic_load_explicit(&m->table, memory_order_relaxed), (uintptr_t)key, value);
    m->count++;
    return true;
}

static void table_remove(struct aclsim__addr_table *t, uintptr_t k)
{
    size_t i = slot_of(t, k);
    for (;;) {
        uintptr_t sk = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
        if (sk == 0)
            return;
        if (sk == k) {
            atomic_store_explicit(&t->slots[i].key, TOMBSTONE, memory_order_release);
            return;
        }
        i = (i + 1) & t->mask;
    }
}

/* Caller holds m->lock. */
void aclsim__map_remove(struct aclsim__addr_map *m, const void *key)
{
    struct aclsim__addr_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    if (!t || aclsim__map_get(m, key) == NULL)
        return;
    table_remove(t, (uintptr_t)key);
    for (struct aclsim__retired *r = m->retired; r; r = r->next)
        table_remove(r->table, (uintptr_t)key);
    m->count--;
    m->tombstones++;
}

/* ---- the registry ------------------------------------------------------------ */

pthread_mutex_t aclsim__registry_lock = PTHREAD_MUTEX_INITIALIZER;
_Thread_local unsigned long aclsim__tls_registration_failures;
static struct aclsim__addr_map vars = {.lock = PTHREAD_MUTEX_INITIALIZER};
/* Every registered variable, for instantiating all of them on a device. */
static aclsimVar **all_vars;
static size_t nvars, cap_vars;
/* Bumped by every registration: a device whose vars_generation equals it has
 * an instance of every variable. */
static atomic_uint registry_generation = 1;

#define SNAPSHOT_MAX ((size_t)1 << 20)

_Thread_local char aclsim__tls_registration_error[384];
_Thread_local aclError aclsim__tls_registration_code;

void aclsim__registration_failed(aclError code, const char *fmt, ...)
{
    aclsim__tls_registration_code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(aclsim__tls_registration_error, sizeof aclsim__tls_registration_error, fmt, ap);
    va_end(ap);
    aclsim__tls_registration_failures++;
    aclsim__log(ACLSIM_LOG_ERROR, "%s", aclsim__tls_registration_error);
}

/* REGISTRATION IS BY ADDRESS (invariants R1-R3):
 *  R1. The registry maps a variable's address (var->symbol) to exactly one
 *      descriptor. The macros make every object (the program, each binary)
 *      register its own descriptor with its own object's address even when
 *      names collide across objects (aclsim.h: hidden descriptor, hidden
 *      alias), so same-named variables of a program and a binary are two
 *      variables.
 *  R2. Registering a descriptor that is already registered only counts
 *      (registrations); unregistering drops one count and the variable goes
 *      (instances freed, initializer snapshot freed) at zero. A descriptor is
 *      never on all_vars twice and its snapshot is taken once.
 *  R3. Another descriptor for an address already registered is refused (a
 *      registration failure with a message: aclrtBinaryLoadFromFile then
 *      refuses the binary) and never touches the registered one; its own
 *      unregistration is a no-op. So unloading a binary never touches a
 *      variable of the program. */
void aclsimRegisterVar(aclsimVar *var)
{
    pthread_mutex_lock(&aclsim__registry_lock);
    aclsimVar *old = aclsim__map_get(&vars, var->symbol);
    if (old == var) {   /* R2 */
        var->registrations++;
        pthread_mutex_unlock(&aclsim__registry_lock);
        return;
    }
    if (old) {   /* R3 */
        pthread_mutex_unlock(&aclsim__registry_lock);
        aclsim__registration_failed(ACL_ERROR_INVALID_FILE,
            "device variable %s (%s:%d) is at address %p, which device variable %s (%s:%d) "
            "already registered; each object must register its own variables (rebuild it "
            "with the current aclsim/aclsim.h)", var->name, var->file, var->line, var->symbol,
            old->name, old->file, old->line);
        return;
    }
    __atomic_store_n(&var->instance[ACLSIM_HOST_SLOT], (void *)var->symbol, __ATOMIC_RELEASE);
    var->initial = NULL;
    if (var->size <= SNAPSHOT_MAX) {
        if (!(var->initial = aclsim__malloc(var->size ? var->size : 1)))
            goto fail;
        memcpy(var->initial, var->symbol, var->size);
    }
    if (nvars == cap_vars) {
        size_t cap = cap_vars ? cap_vars * 2 : 256;
        aclsimVar **bigger = aclsim__realloc(all_vars, cap * sizeof *bigger);
        if (!bigger)
            goto fail;
        all_vars = bigger;
        cap_vars = cap;
    }
    if (!aclsim__map_insert(&vars, var->symbol, var))
        goto fail;
    all_vars[nvars++] = var;
    var->registrations = 1;
    atomic_fetch_add(&registry_generation, 1);
    pthread_mutex_unlock(&aclsim__registry_lock);
    return;
fail:
    free(var->initial);
    var->initial = NULL;
    pthread_mutex_unlock(&aclsim__registry_lock);
    aclsim__registration_failed(ACL_ERROR_BAD_ALLOC, "out of memory registering device variable %s (%s:%d)",
                                var->name, var->file, var->line);
}

void aclsimUnregisterVar(aclsimVar *var)
{
    pthread_mutex_lock(&aclsim__registry_lock);
    /* R3: a descriptor that is not the registered one for its address (never
     * registered, refused, or already gone) changes nothing. */
    if (aclsim__map_get(&vars, var->symbol) == var && --var->registrations == 0) {
        aclsim__map_remove(&vars, var->symbol);
        /* From the back: destructors unregister newest first. */
        for (size_t i = nvars; i-- > 0;)
            if (all_vars[i] == var) {
                all_vars[i] = all_vars[--nvars];
                break;
            }
        for (int d = 0; d < ACLSIM_MAX_DEVICES; d++) {
            void *inst = __atomic_load_n(&var->instance[d], __ATOMIC_ACQUIRE);
            if (inst) {
                __atomic_store_n(&var->instance[d], NULL, __ATOMIC_RELEASE);
                aclsim__heap_free(&aclsim__devices[d].heap, inst, ACLSIM_ALLOC_SYMBOL);
            }
        }
        free(var->initial);
        var->initial = NULL;
    }
    if (nvars == 0) {   /* the last one (process exit): give the list back */
        free(all_vars);
        all_vars = NULL;
        cap_vars = 0;
    }
    pthread_mutex_unlock(&aclsim__registry_lock);
}

/* ---- instances and device lifetime -------------------------------------------
 *
 * INVARIANTS (the instance side of the lifetime rule in internal.h):
 *  I1. var->instance[d] and devices[d].vars_generation are written only under
 *      aclsim__registry_lock, and only while the calling thread's current
 *      context -- the one its API call resolved -- is still live on device d
 *      (checked under that lock: context_live). A context's handle is freed at
 *      the start of a device's close, before aclsim__symbols_forget_device;
 *      so an instance is never created on a device whose session is over, and
 *      never from a call of an earlier session into a later one.
 *  I2. aclsim__symbols_forget_device (under the lock, after the device's
 *      workers stopped and before its heap is reset or destroyed) sets every
 *      instance of the device back to NULL. Instances therefore never outlive
 *      their heap, and the next session starts from the initializers.
 *  I3. A synchronous copy touches an instance only while it has published the
 *      device in its thread's user slot and has seen its context still live
 *      after publishing (Dekker: slot store, then handle load, both seq_cst-
 *      ordered; the closer frees the handle, then scans the slots). Forget
 *      waits until no slot names the device, so a copy that started finishes
 *      on a live device and one that starts later fails with 107002.
 *  I4. A launch creates every registered variable's instance (I1) before its
 *      task is submitted, and the task only runs while its stream's session
 *      lives (submit's epoch check); forget runs after the workers stopped.
 *      So ACLSIM_DEV inside a kernel never reads NULL.
 */

/* Whether ctx, as the calling thread resolved it during this API call, is
 * still live: its handle is the thread's current one and has not been freed
 * (handles are never revived, so a recycled context struct reads as dead). */
static bool context_live(struct aclsim__context *ctx)
{
    return aclsim__handle_get(aclsim__current_handle(), ACLSIM_H_CONTEXT) == ctx;
}

static aclError context_gone(const char *api)
{
    return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                        "the current context was destroyed while the call ran (its device "
                        "was reset, aclFinalize ran, or aclrtDestroyContext); call "
                        "aclrtSetDevice or aclrtSetCurrentContext");
}

static aclError no_room(aclsimVar *var, struct aclsim__device *dev, const char *api)
{
    return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                        "device %d has no room for device variable %s (%zu bytes, %s:%d)",
                        dev->id, var->name, var->size, var->file, var->line);
}

/* Caller holds aclsim__registry_lock and has checked context_live (I1). */
static void *instantiate(aclsimVar *var, struct aclsim__device *dev)
{
    void *inst = __atomic_load_n(&var->instance[dev->id], __ATOMIC_ACQUIRE);
    if (inst)
        return inst;
    size_t align = var->align > 64 ? var->align : 64;
    inst = aclsim__heap_alloc(&dev->heap, var->size, align, ACLSIM_ALLOC_SYMBOL, var);
    if (!inst)
        return NULL;
    /* The initializer (zero if none), as captured at registration. */
    memcpy(inst, var->initial ? var->initial : var->symbol, var->size);
    __atomic_store_n(&var->instance[dev->id], inst, __ATOMIC_RELEASE);
    return inst;
}

/* var's instance on ctx's device, created on first use (I1). */
static aclError instance_of(aclsimVar *var, struct aclsim__context *ctx, const char *api,
                            char **out)
{
    struct aclsim__device *dev = aclsim__context_device(ctx);
    void *inst = __atomic_load_n(&var->instance[dev->id], __ATOMIC_ACQUIRE);
    if (ACLSIM_LIKELY(inst)) {
        *out = inst;
        return ACL_SUCCESS;
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&aclsim__registry_lock);
    if (!context_live(ctx))
        err = context_gone(api);
    else if (aclsim__map_get(&vars, var->symbol) != var)   /* unregistered meanwhile */
        err = aclsim__fail(ACL_ERROR_RT_INVALID_SYMBOL, api,
                           "device variable %s was unregistered (its binary unloaded) while "
                           "the call ran", var->name);
    else if (!(inst = instantiate(var, dev)))
        err = no_room(var, dev, api);
    pthread_mutex_unlock(&aclsim__registry_lock);
    *out = inst;
    return err;
}

aclError aclsim__symbols_instantiate_all(struct aclsim__context *ctx, const char *api)
{
    struct aclsim__device *dev = aclsim__context_device(ctx);
    unsigned gen = atomic_load_explicit(&registry_generation, memory_order_acquire);
    if (ACLSIM_LIKELY(atomic_load_explicit(&dev->vars_generation, memory_order_acquire) == gen))
        return ACL_SUCCESS;
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&aclsim__registry_lock);
    gen = atomic_load(&registry_generation);
    if (!context_live(ctx))
        err = context_gone(api);
    for (size_t i = 0; i < nvars && !err; i++)
        if (!instantiate(all_vars[i], dev))
            err = no_room(all_vars[i], dev, api);
    if (!err)
        atomic_store_explicit(&dev->vars_generation, gen, memory_order_release);
    pthread_mutex_unlock(&aclsim__registry_lock);
    return err;
}

/* ---- user slots (I3) ----------------------------------------------------------- */

/* The store-load ordering of I3 (slot store before the handle load; handle
 * free before the slot scan) needs a full fence on each side: the handle load
 * is only an acquire. ThreadSanitizer does not support standalone fences (and
 * does not model store-load reordering), so its builds use seq_cst accesses
 * alone. */
#if defined(__SANITIZE_THREAD__)
#define ACLSIM__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ACLSIM__TSAN 1
#endif
#endif
#ifdef ACLSIM__TSAN
#define STORE_LOAD_FENCE() ((void)0)
#define SLOT_STORE_ORDER memory_order_seq_cst
#else
#define STORE_LOAD_FENCE() atomic_thread_fence(memory_order_seq_cst)
#define SLOT_STORE_ORDER memory_order_relaxed   /* the fence follows */
#endif

/* One per thread that made a synchronous symbol copy: id + 1 of the device
 * whose instance it is copying right now, or 0. On its own cache line, so
 * threads copying in parallel share nothing. Slots are never freed: a
 * thread's slot is given back at its exit (taken = false) for reuse. */
struct user_slot {
    _Alignas(64) atomic_uint device;
    atomic_bool taken;
    struct user_slot *next;
};
static struct user_slot *_Atomic user_slots;
static _Thread_local struct user_slot *tls_slot;

void aclsim__symbol_thread_exit(void)
{
    struct user_slot *u = tls_slot;
    tls_slot = NULL;
    if (u) {
        atomic_store_explicit(&u->device, 0, memory_order_release);
        atomic_store_explicit(&u->taken, false, memory_order_release);
    }
}

/* The calling thread's slot, or NULL when out of memory. */
static struct user_slot *user_slot(void)
{
    if (ACLSIM_LIKELY(tls_slot != NULL))
        return tls_slot;
    struct user_slot *u = atomic_load_explicit(&user_slots, memory_order_acquire);
    for (; u; u = u->next) {
        bool free_slot = false;
        if (atomic_compare_exchange_strong(&u->taken, &free_slot, true))
            break;
    }
    if (!u) {
        if (!(u = aclsim__aligned_alloc(_Alignof(struct user_slot), sizeof *u)))
            return NULL;
        atomic_init(&u->device, 0);
        atomic_init(&u->taken, true);
        u->next = atomic_load_explicit(&user_slots, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&user_slots, &u->next, u,
                                                      memory_order_release,
                                                      memory_order_relaxed))
            ;
    }
    if (!aclsim__thread_keep(ACLSIM_THREAD_SYMBOL_SLOT)) {   /* cannot be given back: keep it taken */
        aclsim__log(ACLSIM_LOG_WARNING, "a symbol-copy slot will not be reused after its "
                                        "thread exits");
    }
    tls_slot = u;
    return u;
}

/* Copies n bytes between host memory and an instance on ctx's device (I3):
 * either the copy runs while the device's session lives, or 107002. */
static aclError copy_live(struct aclsim__context *ctx, void *dst, const void *src, size_t n,
                          const char *label, const char *api)
{
    struct user_slot *u = user_slot();
    if (ACLSIM_UNLIKELY(!u)) {
        /* No slot (out of memory): the registry lock keeps forget out instead. */
        aclError err = ACL_SUCCESS;
        pthread_mutex_lock(&aclsim__registry_lock);
        if (context_live(ctx))
            memcpy(dst, src, n);
        else
            err = context_gone(api);
        pthread_mutex_unlock(&aclsim__registry_lock);
        return err;
    }
    atomic_store_explicit(&u->device, (unsigned)aclsim__context_device(ctx)->id + 1, SLOT_STORE_ORDER);
    STORE_LOAD_FENCE();
    if (ACLSIM_UNLIKELY(!context_live(ctx))) {
        atomic_store_explicit(&u->device, 0, memory_order_release);
        return context_gone(api);
    }
    uint64_t trace_start = aclsim__trace_start();   /* TRACE HOOK (with the call below) */
    memcpy(dst, src, n);
    atomic_store_explicit(&u->device, 0, memory_order_release);
    if (ACLSIM_UNLIKELY(trace_start))
        aclsim__trace_sync_copy(api, dst, src, n, label, trace_start);
    return ACL_SUCCESS;
}

void aclsim__symbols_forget_device(struct aclsim__device *dev)
{
    /* I3: every context handle of the device is freed by now; wait out the
     * synchronous copies that saw one live (each is one memcpy). */
    unsigned mine = (unsigned)dev->id + 1;
    STORE_LOAD_FENCE();
    for (struct user_slot *u = atomic_load_explicit(&user_slots, memory_order_acquire); u;
         u = u->next)
        while (atomic_load_explicit(&u->device, memory_order_seq_cst) == mine)
            sched_yield();
    pthread_mutex_lock(&aclsim__registry_lock);
    for (size_t i = 0; i < nvars; i++)
        __atomic_store_n(&all_vars[i]->instance[dev->id], NULL, __ATOMIC_RELEASE);
    atomic_store(&dev->vars_generation, 0);
    pthread_mutex_unlock(&aclsim__registry_lock);
}

aclsimVar *aclsim__var_of(const void *symbol) { return aclsim__map_get(&vars, symbol); }

/* ---- the six functions ------------------------------------------------------ */

/* Steps shared by all six after the argument checks: current context, product
 * support, lookup. On success *var and *inst are the variable and its
 * instance on the current device. (aclrtBinaryGetGlobal uses it too.) */
aclError aclsim__symbol_resolve(const void *symbol, const char *api, struct aclsim__context **ctx,
                        aclsimVar **var, char **inst)
{
    aclError err = aclsim__current_context(api, ctx);
    if (ACLSIM_UNLIKELY(err))
        return err;
    if (ACLSIM_UNLIKELY(!aclsim__config()->symbols_supported))
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "device variables are not supported on SoC %s (its product family "
                            "has no device-variable support; see ACLSIM_SOC_VERSION)",
                            aclsim__config()->soc_name);
    *var = aclsim__map_get(&vars, symbol);
    if (ACLSIM_UNLIKELY(!*var || (*var)->symbol != symbol)) {
        char what[256];
        aclsim__describe(symbol, what, sizeof what);
        return aclsim__fail(ACL_ERROR_RT_INVALID_SYMBOL, api,
                            "symbol %p is not the address of a registered device variable "
                            "(declare it with ACLSIM_DEVICE_VAR and pass &var or the array "
                            "itself; it is %s)", symbol, what);
    }
    return instance_of(*var, *ctx, api, inst);
}

aclError aclrtGetSymbolAddress(const void *symbol, void **devPtr)
{
    static const char api[] = "aclrtGetSymbolAddress";
    ACLSIM_REQUIRE_INIT(api);
    if (ACLSIM_UNLIKELY(!symbol || !devPtr))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !symbol ? "symbol" : "devPtr");
    struct aclsim__context *ctx = NULL;
    aclsimVar *var = NULL;
    char *inst = NULL;
    aclError err = aclsim__symbol_resolve(symbol, api, &ctx, &var, &inst);
    if (ACLSIM_LIKELY(!err))
        *devPtr = inst;
    return err;
}

aclError aclrtGetSymbolSize(const void *symbol, size_t *size)
{
    static const char api[] = "aclrtGetSymbolSize";
    ACLSIM_REQUIRE_INIT(api);
    if (ACLSIM_UNLIKELY(!symbol || !size))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !symbol ? "symbol" : "size");
    struct aclsim__context *ctx = NULL;
    aclsimVar *var = NULL;
    char *inst = NULL;
    aclError err = aclsim__symbol_resolve(symbol, api, &ctx, &var, &inst);
    if (ACLSIM_LIKELY(!err))
        *size = var->size;
    return err;
}

enum direction { TO_SYMBOL, FROM_SYMBOL };

/* Steps 2-6 of CANN's check order for the four copies (step 1, count == 0,
 * is done by the caller). On success *dev_addr is instance + offset. */
static aclError check_symbol_copy(enum direction dir, const void *host, size_t hostMax,
                                  const void *symbol, size_t count, size_t offset, int kind,
                                  const char *api, struct aclsim__context **ctx,
                                  char **dev_addr, aclsimVar **var_out, bool *pinned_out)
{
    const char *host_name = dir == TO_SYMBOL ? "src" : "dst";
    if (ACLSIM_UNLIKELY(!symbol || !host))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !symbol ? "symbol" : host_name);
    if (dir == FROM_SYMBOL && ACLSIM_UNLIKELY(count > hostMax))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "count %zu is larger than dstMax %zu", count, hostMax);
    int allowed = dir == TO_SYMBOL ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_HOST;
    if (ACLSIM_UNLIKELY(kind != allowed && kind != ACL_MEMCPY_DEFAULT))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kind %d is not allowed: only %s or ACL_MEMCPY_DEFAULT", kind,
                            dir == TO_SYMBOL ? "ACL_MEMCPY_HOST_TO_DEVICE"
                                             : "ACL_MEMCPY_DEVICE_TO_HOST");
    aclsimVar *var = NULL;
    char *inst = NULL;
    aclError err = aclsim__symbol_resolve(symbol, api, ctx, &var, &inst);
    if (ACLSIM_UNLIKELY(err))
        return err;
    if (ACLSIM_UNLIKELY(offset + count < offset))
        return aclsim__fail(ACL_ERROR_FAILURE, api,
                            "offset %zu + count %zu overflows size_t (device variable %s, %s:%d)",
                            offset, count, var->name, var->file, var->line);
    if (ACLSIM_UNLIKELY(offset + count > var->size))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "offset %zu + count %zu = %zu exceeds the %zu bytes of device "
                            "variable %s (%s:%d)", offset, count, offset + count, var->size,
                            var->name, var->file, var->line);
    bool pinned = aclsim__heap_contains(&aclsim__host_heap, host);
    if (pinned && (err = aclsim__check_range(api, host_name, host, count,
                                             (struct aclsim__where){ACLSIM_PINNED, NULL})))
        return err;   /* a page-locked buffer overrun, or freed */
    /* (Page-locked memory is host memory: only other pointers may be device memory.) */
    if (ACLSIM_UNLIKELY(!pinned && aclsim__device_of(host) != NULL)) {
        char what[256];
        aclsim__describe(host, what, sizeof what);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s %p is %s, but the host side of a symbol copy must be host "
                            "memory; for device-to-device copies call aclrtMemcpy on the "
                            "address from aclrtGetSymbolAddress", host_name, host, what);
    }
    *dev_addr = inst + offset;
    *var_out = var;
    *pinned_out = pinned;
    return ACL_SUCCESS;
}

aclError aclrtMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                             aclrtMemcpyKind kind)
{
    static const char api[] = "aclrtMemcpyToSymbol";
    if (count == 0)
        return ACL_SUCCESS;
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__context *ctx = NULL;
    char *dev = NULL;
    aclsimVar *var = NULL;
    bool pinned = false;
    aclError err = check_symbol_copy(TO_SYMBOL, src, 0, symbol, count, offset, (int)kind, api,
                                     &ctx, &dev, &var, &pinned);
    if (ACLSIM_LIKELY(!err))
        err = copy_live(ctx, dev, src, count, var->name, api);
    return err;
}

aclError aclrtMemcpyFromSymbol(void *dst, size_t dstMax, const void *symbol, size_t count,
                               size_t offset, aclrtMemcpyKind kind)
{
    static const char api[] = "aclrtMemcpyFromSymbol";
    if (count == 0)
        return ACL_SUCCESS;
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__context *ctx = NULL;
    char *dev = NULL;
    aclsimVar *var = NULL;
    bool pinned = false;
    aclError err = check_symbol_copy(FROM_SYMBOL, dst, dstMax, symbol, count, offset, (int)kind,
                                     api, &ctx, &dev, &var, &pinned);
    if (ACLSIM_LIKELY(!err))
        err = copy_live(ctx, dst, dev, count, var->name, api);
    return err;
}

static aclError symbol_copy_async(enum direction dir, void *host, size_t hostMax,
                                  const void *symbol, size_t count, size_t offset, int kind,
                                  aclrtStream stream, const char *api)
{
    struct aclsim__context *ctx = NULL;
    char *dev = NULL;
    aclsimVar *var = NULL;
    bool pinned = false;
    aclError err = check_symbol_copy(dir, host, hostMax, symbol, count, offset, kind, api, &ctx,
                                     &dev, &var, &pinned);
    if (ACLSIM_UNLIKELY(err))
        return err;
    struct aclsim__sref s;
    if ((err = aclsim__stream_resolve(stream, api, &ctx, &s)))   /* ctx known from the checks */
        return err;
    /* Still live after the stream was resolved: the stream's recorded epoch
     * belongs to the session in which dev is an instance, so a reset from
     * now on makes submit refuse the copy (I1 for the async copies). */
    if (ACLSIM_UNLIKELY(!context_live(ctx)))
        return context_gone(api);
    return dir == TO_SYMBOL
               ? aclsim__copy_async(s, dev, host, count, !pinned, var->name, api)
               : aclsim__copy_async(s, host, dev, count, !pinned, var->name, api);
}

aclError aclrtMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                  size_t offset, aclrtMemcpyKind kind, aclrtStream stream)
{
    static const char api[] = "aclrtMemcpyToSymbolAsync";
    if (count == 0)
        return ACL_SUCCESS;
    ACLSIM_REQUIRE_INIT(api);
    return symbol_copy_async(TO_SYMBOL, (void *)src, 0, symbol, count, offset, (int)kind, stream,
                             api);
}

aclError aclrtMemcpyFromSymbolAsync(void *dst, size_t dstMax, const void *symbol, size_t count,
                                    size_t offset, aclrtMemcpyKind kind, aclrtStream stream)
{
    static const char api[] = "aclrtMemcpyFromSymbolAsync";
    if (count == 0)
        return ACL_SUCCESS;
    ACLSIM_REQUIRE_INIT(api);
    return symbol_copy_async(FROM_SYMBOL, dst, dstMax, symbol, count, offset, (int)kind, stream,
                             api);
}

/* After fork(), in the child (internal.h, THE FORK RULE). The other
 * threads' user slots (I3) are given back: those threads do not exist here,
 * and a slot left naming a device (a copy in flight at fork()) would make the
 * child's forget of that device wait forever. */
void aclsim__symbols_forget_after_fork(void)
{
    pthread_mutex_init(&aclsim__registry_lock, NULL);
    pthread_mutex_init(&vars.lock, NULL);
    for (struct user_slot *u = atomic_load_explicit(&user_slots, memory_order_acquire); u;
         u = u->next) {
        atomic_store_explicit(&u->device, 0, memory_order_relaxed);
        if (u != tls_slot)
            atomic_store_explicit(&u->taken, false, memory_order_relaxed);
    }
}
