/*
 * Device variables: the registry of aclsimVar descriptors (filled before main
 * by the ACLSIM_DEVICE_VAR constructors, and by dlopen of kernel binaries),
 * their per-device instances, and the six CANN symbol functions.
 *
 * An instance is a device allocation (counted in the device's memory, 64-byte
 * aligned or more) made on first use on that device, initialised from the
 * host object's initial contents. var->instance[d] is written once under
 * aclsim__registry_lock and read without a lock afterwards; it goes back to
 * NULL only when device d closes (its heap, and every instance, goes away).
 */
#include "internal.h"

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

void aclsimRegisterVar(aclsimVar *var)
{
    __atomic_store_n(&var->instance[ACLSIM_HOST_SLOT], (void *)var->symbol, __ATOMIC_RELEASE);
    if (var->size <= SNAPSHOT_MAX) {
        if (!(var->initial = aclsim__malloc(var->size ? var->size : 1))) {
            aclsim__tls_registration_failures++;
            aclsim__log(ACLSIM_LOG_ERROR, "out of memory registering device variable %s (%s:%d)",
                        var->name, var->file, var->line);
            return;
        }
        memcpy(var->initial, var->symbol, var->size);
    }
    pthread_mutex_lock(&aclsim__registry_lock);
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
    atomic_fetch_add(&registry_generation, 1);
    pthread_mutex_unlock(&aclsim__registry_lock);
    return;
fail:
    pthread_mutex_unlock(&aclsim__registry_lock);
    free(var->initial);
    var->initial = NULL;
    aclsim__tls_registration_failures++;
    aclsim__log(ACLSIM_LOG_ERROR, "out of memory registering device variable %s (%s:%d)",
                var->name, var->file, var->line);
}

void aclsimUnregisterVar(aclsimVar *var)
{
    pthread_mutex_lock(&aclsim__registry_lock);
    if (aclsim__map_get(&vars, var->symbol) == var) {
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
    }
    free(var->initial);
    var->initial = NULL;
    if (nvars == 0) {   /* the last one (process exit): give the list back */
        free(all_vars);
        all_vars = NULL;
        cap_vars = 0;
    }
    pthread_mutex_unlock(&aclsim__registry_lock);
}

/* Caller holds aclsim__registry_lock. */
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

static void *instance_of(aclsimVar *var, struct aclsim__device *dev)
{
    void *inst = __atomic_load_n(&var->instance[dev->id], __ATOMIC_ACQUIRE);
    if (ACLSIM_LIKELY(inst))
        return inst;
    pthread_mutex_lock(&aclsim__registry_lock);
    inst = instantiate(var, dev);
    pthread_mutex_unlock(&aclsim__registry_lock);
    return inst;
}

aclError aclsim__symbols_instantiate_all(struct aclsim__device *dev, const char *api)
{
    unsigned gen = atomic_load_explicit(&registry_generation, memory_order_acquire);
    if (ACLSIM_LIKELY(atomic_load_explicit(&dev->vars_generation, memory_order_acquire) == gen))
        return ACL_SUCCESS;
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&aclsim__registry_lock);
    gen = atomic_load(&registry_generation);
    for (size_t i = 0; i < nvars && !err; i++)
        if (!instantiate(all_vars[i], dev))
            err = aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                               "device %d has no room for device variable %s (%zu bytes, %s:%d)",
                               dev->id, all_vars[i]->name, all_vars[i]->size, all_vars[i]->file,
                               all_vars[i]->line);
    if (!err)
        atomic_store_explicit(&dev->vars_generation, gen, memory_order_release);
    pthread_mutex_unlock(&aclsim__registry_lock);
    return err;
}

void aclsim__symbols_forget_device(struct aclsim__device *dev)
{
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
    *inst = instance_of(*var, (*ctx)->device);
    if (ACLSIM_UNLIKELY(!*inst))
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "device %d has no room for device variable %s (%zu bytes, %s:%d)",
                            (*ctx)->device->id, (*var)->name, (*var)->size, (*var)->file,
                            (*var)->line);
    return ACL_SUCCESS;
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
                                  char **dev_addr, aclsimVar **var_out)
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
    if (aclsim__heap_contains(&aclsim__host_heap, host) &&
        (err = aclsim__check_range(api, host_name, host, count,
                                   (struct aclsim__where){ACLSIM_PINNED, NULL})))
        return err;   /* a page-locked buffer overrun, or freed */
    if (ACLSIM_UNLIKELY(aclsim__device_of(host) != NULL)) {
        char what[256];
        aclsim__describe(host, what, sizeof what);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s %p is %s, but the host side of a symbol copy must be host "
                            "memory; for device-to-device copies call aclrtMemcpy on the "
                            "address from aclrtGetSymbolAddress", host_name, host, what);
    }
    *dev_addr = inst + offset;
    *var_out = var;
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
    aclError err = check_symbol_copy(TO_SYMBOL, src, 0, symbol, count, offset, (int)kind, api,
                                     &ctx, &dev, &var);
    if (ACLSIM_LIKELY(!err))
        memcpy(dev, src, count);
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
    aclError err = check_symbol_copy(FROM_SYMBOL, dst, dstMax, symbol, count, offset, (int)kind,
                                     api, &ctx, &dev, &var);
    if (ACLSIM_LIKELY(!err))
        memcpy(dst, dev, count);
    return err;
}

static aclError symbol_copy_async(enum direction dir, void *host, size_t hostMax,
                                  const void *symbol, size_t count, size_t offset, int kind,
                                  aclrtStream stream, const char *api)
{
    struct aclsim__context *ctx = NULL;
    char *dev = NULL;
    aclsimVar *var = NULL;
    aclError err = check_symbol_copy(dir, host, hostMax, symbol, count, offset, kind, api, &ctx,
                                     &dev, &var);
    if (ACLSIM_UNLIKELY(err))
        return err;
    struct aclsim__sref s;
    if ((err = aclsim__stream_resolve(stream, api, &ctx, &s)))   /* ctx known from the checks */
        return err;
    bool pageable = !aclsim__heap_contains(&aclsim__host_heap, host);
    return dir == TO_SYMBOL
               ? aclsim__copy_async(s, dev, host, count, pageable, var->name, api)
               : aclsim__copy_async(s, host, dev, count, pageable, var->name, api);
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

/* After fork(), in the child (internal.h, THE FORK RULE). */
void aclsim__symbols_forget_after_fork(void)
{
    pthread_mutex_init(&aclsim__registry_lock, NULL);
    pthread_mutex_init(&vars.lock, NULL);
}
