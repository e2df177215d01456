/*
 * Init and finalize callbacks (aclInitCallbackRegister & co.), as CANN runs
 * them: one callback per registration type except ACL_REG_TYPE_OTHER, which
 * takes any number; aclInit calls the init callbacks of types MODEL,
 * OP_EXECUTOR (only with a configuration file), DVPP and OTHER, in that order,
 * with the configuration file's content; aclFinalize calls the finalize
 * callbacks of OP_COMPILER, MODEL, DVPP and OTHER. A callback registered
 * while the runtime is initialized is called at once. A callback that fails
 * makes aclInit (which then finalizes again) or aclFinalize (which then leaves
 * the runtime initialized) fail with its code.
 *
 * Callbacks run without any runtime lock held, so they may call the runtime.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    aclRegisterCallbackType type;
    void (*fn)(void);   /* aclInitCallbackFunc or aclFinalizeCallbackFunc */
    void *user;
};

struct registry {
    struct entry *items;
    size_t n, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct registry inits, finals;
static char *config_text;    /* the configuration of the live session (under lock) */
static size_t config_len;

static aclError add(struct registry *r, aclRegisterCallbackType type, void (*fn)(void),
                    void *user, const char *api)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i].type == type && type != ACL_REG_TYPE_OTHER)
            return aclsim__fail(ACL_ERROR_INTERNAL_ERROR, api,
                                "a callback of type %d is registered already (only "
                                "ACL_REG_TYPE_OTHER takes several)", (int)type);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        struct entry *bigger = aclsim__realloc(r->items, cap * sizeof *bigger);
        if (!bigger)
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        r->items = bigger;
        r->cap = cap;
    }
    r->items[r->n++] = (struct entry){type, fn, user};
    return ACL_SUCCESS;
}

static aclError drop(struct registry *r, aclRegisterCallbackType type, void (*fn)(void),
                     const char *api)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i].type == type && r->items[i].fn == fn) {
            memmove(&r->items[i], &r->items[i + 1], (r->n - i - 1) * sizeof r->items[0]);
            r->n--;
            return ACL_SUCCESS;
        }
    return aclsim__fail(ACL_ERROR_INTERNAL_ERROR, api,
                        "no such callback is registered for type %d", (int)type);
}

/* A copy of the entries of one type (the callbacks run without the lock). */
static size_t entries_of(struct registry *r, aclRegisterCallbackType type, struct entry **out)
{
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->items[i].type == type;
    if (!n || !(*out = aclsim__malloc(n * sizeof **out)))
        return 0;
    n = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i].type == type)
            (*out)[n++] = r->items[i];
    return n;
}

aclError aclInitCallbackRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc,
                                 void *userData)
{
    static const char api[] = "aclInitCallbackRegister";
    if (!cbFunc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "cbFunc is NULL");
    pthread_mutex_lock(&lock);
    aclError err = add(&inits, type, (void (*)(void))cbFunc, userData, api);
    char *text = NULL;
    size_t len = config_len;
    bool now = !err && aclsim__initialized() && config_text;
    if (now && !(text = aclsim__malloc(len + 1)))
        now = false;
    if (now)
        memcpy(text, config_text, len + 1);
    pthread_mutex_unlock(&lock);
    if (now)   /* registered after aclInit: called at once (its result is not reported) */
        (void)cbFunc(text, len, userData);
    free(text);
    return err;
}

aclError aclInitCallbackUnRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc)
{
    static const char api[] = "aclInitCallbackUnRegister";
    if (!cbFunc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "cbFunc is NULL");
    pthread_mutex_lock(&lock);
    aclError err = drop(&inits, type, (void (*)(void))cbFunc, api);
    pthread_mutex_unlock(&lock);
    return err;
}

aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc,
                                     void *userData)
{
    static const char api[] = "aclFinalizeCallbackRegister";
    if (!cbFunc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "cbFunc is NULL");
    pthread_mutex_lock(&lock);
    aclError err = add(&finals, type, (void (*)(void))cbFunc, userData, api);
    pthread_mutex_unlock(&lock);
    return err;
}

aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc)
{
    static const char api[] = "aclFinalizeCallbackUnRegister";
    if (!cbFunc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "cbFunc is NULL");
    pthread_mutex_lock(&lock);
    aclError err = drop(&finals, type, (void (*)(void))cbFunc, api);
    pthread_mutex_unlock(&lock);
    return err;
}

/* Reads the configuration file whole ("" without one). */
static char *read_config(const char *path, size_t *len)
{
    *len = 0;
    if (!path || !*path)
        return aclsim__strdup("");
    FILE *f = fopen(path, "rb");
    if (!f)
        return aclsim__strdup("");
    char *text = NULL;
    size_t cap = 0;
    for (;;) {
        if (*len + 4096 + 1 > cap) {
            char *bigger = aclsim__realloc(text, cap = *len + 4096 + 1);
            if (!bigger) {
                free(text);
                fclose(f);
                return NULL;
            }
            text = bigger;
        }
        size_t got = fread(text + *len, 1, 4096, f);
        *len += got;
        if (got < 4096)
            break;
    }
    fclose(f);
    text[*len] = '\0';
    return text;
}

aclError aclsim__init_callbacks_run(const char *config_path, int *failed_type)
{
    size_t len = 0;
    char *text = read_config(config_path, &len);
    if (!text)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, "aclInit", "out of memory");
    pthread_mutex_lock(&lock);
    free(config_text);
    config_text = text;
    config_len = len;
    pthread_mutex_unlock(&lock);
    static const aclRegisterCallbackType order[] = {ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_OP_EXECUTOR,
                                                    ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER};
    bool have_file = config_path && *config_path;
    for (size_t t = 0; t < sizeof order / sizeof order[0]; t++) {
        if (order[t] == ACL_REG_TYPE_ACL_OP_EXECUTOR && !have_file)
            continue;
        struct entry *e;
        pthread_mutex_lock(&lock);
        size_t n = entries_of(&inits, order[t], &e);
        pthread_mutex_unlock(&lock);
        for (size_t i = 0; i < n; i++) {
            aclError err = ((aclInitCallbackFunc)e[i].fn)(text, len, e[i].user);
            if (err) {
                free(e);
                *failed_type = (int)order[t];
                return err;
            }
        }
        free(e);
    }
    return ACL_SUCCESS;
}

aclError aclsim__finalize_callbacks_run(void)
{
    static const aclRegisterCallbackType order[] = {ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_MODEL,
                                                    ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER};
    for (size_t t = 0; t < sizeof order / sizeof order[0]; t++) {
        struct entry *e;
        pthread_mutex_lock(&lock);
        size_t n = entries_of(&finals, order[t], &e);
        pthread_mutex_unlock(&lock);
        for (size_t i = 0; i < n; i++) {
            aclError err = ((aclFinalizeCallbackFunc)e[i].fn)(e[i].user);
            if (err) {
                free(e);
                return aclsim__fail(err, "aclFinalize",
                                    "the finalize callback of type %d returned %d (the runtime "
                                    "stays initialized)", (int)order[t], err);
            }
        }
        free(e);
    }
    pthread_mutex_lock(&lock);
    free(config_text);
    config_text = NULL;
    config_len = 0;
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

/* After fork(), in the child (internal.h, THE FORK RULE). */
void aclsim__initcb_forget_after_fork(void)
{
    pthread_mutex_init(&lock, NULL);
}
