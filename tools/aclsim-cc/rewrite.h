/*
 * aclsim-cc's source rewriter: a C++ tokenizer and a light structural parser
 * that turn Ascend C into C++ for aclsim (see the design comment at the top
 * of main.c). Pure functions over memory, so tests/test-ascendc-rewrite.c can
 * drive them without a compiler.
 */
#ifndef ACLSIM_CC_REWRITE_H
#define ACLSIM_CC_REWRITE_H

#include <stdbool.h>
#include <stddef.h>

/* A growable string. */
struct acc_buf {
    char *data;
    size_t len, cap;
};
void acc_buf_add(struct acc_buf *b, const char *s, size_t n);
void acc_buf_puts(struct acc_buf *b, const char *s);
void acc_buf_printf(struct acc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void acc_buf_free(struct acc_buf *b);

/* One __global__ kernel defined in the file. */
struct acc_kernel {
    char *name;          /* as written (may be qualified by the enclosing namespaces: qname) */
    char *qname;         /* name qualified with its named namespaces, e.g. "ns::k" */
    int line;            /* line of its name */
    bool is_template;
    unsigned nparams;
    char **param_type;   /* declared type, __gm__ removed; "void*" for GM_ADDR / __gm__ pointers */
    char **param_name;   /* the parameter's name, or "argN" */
    bool *param_gm;      /* a global-memory pointer (shown as void* in launch headers) */
};

struct acc_result {
    struct acc_buf out;          /* the rewritten source */
    struct acc_kernel *kernels;  /* every __global__ kernel defined */
    size_t nkernels;
    struct acc_buf errors;       /* "file:line:col: error: ...\n" lines; empty on success */
};

/* Rewrites src (len bytes) read from path. display is the file name used in
 * #line and messages (normally path). With launch_funcs, defines
 * aclrtlaunch_<kernel> for each non-template kernel. Returns false (and fills
 * errors) on input it cannot handle. */
bool acc_rewrite(const char *src, size_t len, const char *display, bool launch_funcs,
                 struct acc_result *res);
void acc_result_free(struct acc_result *res);

/* The text of DIR/aclrtlaunch_<kernel>.h for kernel k (CANN's shape). */
void acc_launch_header(const struct acc_kernel *k, struct acc_buf *out);

#endif
