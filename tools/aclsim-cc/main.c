/*
 * aclsim-cc: compiles Ascend C sources for the CPU with the system C++
 * compiler (docs/ascendc-driver.md has the command line).
 *
 * DESIGN
 *
 * The driver is a front end to c++ (or $ACLSIM_CXX): every ordinary flag
 * goes through unchanged and in order. Each Ascend C source (.asc, C++
 * sources, anything after -x asc) is read, rewritten in memory
 * (rewrite.c) and written under the same base name into a private
 * temporary directory (mkdtemp under $TMPDIR), compiled from there as C++,
 * and the directory is removed. Nothing is written next to the sources.
 * The rewritten copy begins with `#include "aclsim_ascendc.h"` (the basic
 * layer of kernel_operator.h: the qualifiers are empty macros, and the
 * support templates the rewriting calls) and `#line 1 "<source>"`; every
 * rewrite keeps the line structure (insertions stay on the line, replaced
 * newlines are written again), so diagnostics, __FILE__ and __LINE__ are the
 * user's. `-iquote <source dir>` keeps `#include "x.h"` next to the source
 * working; the dependency file the compiler writes (-MD/-MMD) gets the
 * source path back in place of the temporary one.
 *
 * The rewriter is a real tokenizer (comments, splices, string, raw-string,
 * character literals with prefixes and suffixes, digit separators,
 * directives) plus a light parse of scopes: namespaces and linkage blocks
 * are transparent, class bodies are scanned for member functions, function
 * bodies and initializers are skipped over as balanced brackets.
 *
 * - `k<<<n, ctrl, stream>>>(args)` (k may be qualified and templated:
 *   `ns::k<T, 8>`) becomes
 *   `::aclsim_asc::fn<decltype(&k)>::template launcher<&k>("k", __FILE__,
 *   __LINE__, n, ctrl, stream)(args)` (no comma outside parentheses, so a
 *   launch inside a macro's arguments stays one argument): only the `k<<<` and `>>>` spans are replaced, so
 *   arguments spanning lines or directives stay as written, and a launch
 *   inside a #define is rewritten within the macro. `>>>` closes the launch
 *   only at bracket depth 0 after a `<<<`, so `a<b<c>>>` elsewhere is left
 *   alone. The launcher converts the arguments to the parameter types
 *   (a static_assert checks their number), registers the kernel if needed
 *   and calls aclsimLaunchAt (aclrtLaunchKernelWithArgsArray; its aclError
 *   is the expression's value, and a failure's message names file:line).
 * - Each non-template `__global__` function definition is followed (on its
 *   closing line) by static_asserts (at most 16 parameters, each trivially
 *   copyable and not a reference; the message names file:line) and a
 *   registrar object: aclsimRegisterKernel at load time through
 *   aclsim_asc::kernel<F, f>, one descriptor per function (a function-local
 *   static of a template, shared by every translation unit and by launches),
 *   so aclrtGetFuncBySymbol(&k) and aclrtLaunchKernelWithArgsArray work with
 *   no registration line. A template kernel's instantiations register at
 *   their first launch.
 * - A namespace-scope declaration with `__gm__` among its specifiers is a
 *   device variable. The object keeps its name and stays the host object
 *   (the CANN "symbol": aclrtMemcpyToSymbol(v, ...), aclrtGetSymbolAddress(&v,
 *   ...) and the C++ overloads of acl/acl_rt_api.h get its address, as with
 *   ACLSIM_DEVICE_VAR). After the declaration the driver adds its
 *   descriptor `aclsim__var_<name>` (extern "C++", static for a static
 *   variable, only declared for an extern declaration, so separate
 *   compilation links the uses to the definition), a registrar object and a
 *   static_assert that the type can be a device variable. Inside the bodies
 *   of `__global__` and `__aicore__` functions (member functions and lambdas
 *   included), every use of the name, unqualified or qualified (`ns::v`,
 *   `::v`) but not as a member (`.v`, `->v`) becomes
 *   `ACLSIM_ASC_DEV(v, aclsim__var_v)`: the instance of the device the block
 *   runs on (as ACLSIM_DEV). Outside kernels the instance expression names
 *   the host object, as in Ascend's CPU-debug mode. The NPU's asm("trap")
 *   in kernel code becomes trap() (a launch failure).
 * - With --aclsim-launch-header-dir, each non-template kernel also gets
 *   `extern "C" uint32_t aclrtlaunch_<k>(blockDim, stream, params)` defined
 *   at the end of the file (GM_ADDR / __gm__ pointers as void*) and the
 *   header DIR/aclrtlaunch_<k>.h declaring it, as CANN generates them.
 *
 * Parameters and locals of kernel code with a __gm__ variable's name hide
 * it for their scope when their declaration has a recognisable shape
 * (rewrite.c: declares()).
 *
 * Known limits: a class member used unqualified (implicit this->) with a
 * __gm__ variable's name is rewritten; `__global__` hidden behind a user macro is not seen; conditional
 * code is rewritten in every branch (which is harmless) but a declaration
 * split between #if branches may confuse the scope parse.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rewrite.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct soc { const char *name; unsigned arch; };
static const struct soc socs[] = {
#define ACLSIM_SOC(name, family, arch, ...) {name, arch},
#include "soc.def"
#undef ACLSIM_SOC
};

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "aclsim-cc: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(1);
}

struct argv_list {
    char **v;
    size_t n, cap;
};

static void arg_add(struct argv_list *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
        if (!a->v)
            die("%s", "out of memory");
    }
    a->v[a->n++] = strdup(s);
    a->v[a->n] = NULL;
}

static char *xasprintf(const char *fmt, const char *a, const char *b)
{
    char *s;
    if (asprintf(&s, fmt, a, b) < 0)
        die("%s", "out of memory");
    return s;
}

static char *dir_of(const char *path)
{
    char *d = strdup(path);
    char *slash = strrchr(d, '/');
    if (!slash) {
        free(d);
        return strdup(".");
    }
    if (slash == d)
        slash[1] = 0;
    else
        *slash = 0;
    return d;
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct acc_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        acc_buf_add(&b, chunk, n);
    fclose(f);
    if (!b.data)
        acc_buf_add(&b, "", 0);
    *len = b.len;
    return b.data;
}

static bool write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* Writes path only if its content differs (keeps timestamps for make). */
static bool update_file(const char *path, const char *data, size_t len)
{
    size_t old_len;
    char *old = read_file(path, &old_len);
    bool same = old && old_len == len && !memcmp(old, data, len);
    free(old);
    return same || write_file(path, data, len);
}

static void mkdirs(const char *dir)
{
    char *d = strdup(dir);
    for (char *p = d + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(d, 0777);
            *p = '/';
        }
    if (mkdir(d, 0777) != 0 && errno != EEXIST)
        die("cannot create directory %s", d);
    free(d);
}

static bool is_cxx_source(const char *p)
{
    const char *dot = strrchr(base_of(p), '.');
    if (!dot)
        return false;
    static const char *const ext[] = {".asc", ".cpp", ".cc", ".cxx", ".c++", ".C", ".cp",
                                      ".CPP", ".cce", ".cu"};
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
        if (!strcmp(dot, ext[i]))
            return true;
    return false;
}

static bool is_c_source(const char *p)
{
    const char *dot = strrchr(base_of(p), '.');
    return dot && !strcmp(dot, ".c");
}

/* Options of g++ whose value is the next argument. */
static bool takes_value(const char *a)
{
    static const char *const opts[] = {"-o", "-I", "-D", "-U", "-include", "-imacros",
                                       "-isystem", "-iquote", "-idirafter", "-iprefix",
                                       "-iwithprefix", "-iwithprefixbefore", "-isysroot",
                                       "-MF", "-MT", "-MQ", "-L", "-l", "-Xlinker",
                                       "-Xassembler", "-Xpreprocessor", "-T", "-u", "-z",
                                       "-e", "-aux-info", "--param", "-dumpdir", "-dumpbase",
                                       "-B", "-wrapper", NULL};
    for (int i = 0; opts[i]; i++)
        if (!strcmp(a, opts[i]))
            return true;
    return false;
}

static int run(char **argv, bool verbose)
{
    if (verbose) {
        for (char **a = argv; *a; a++)
            fprintf(stderr, "%s%s", a == argv ? "" : " ", *a);
        fprintf(stderr, "\n");
    }
    pid_t pid = fork();
    if (pid < 0)
        die("%s", "cannot fork");
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "aclsim-cc: error: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("%s", "waitpid failed");
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Removes the temporary copies, their per-input directories and dir. */
static void remove_tree(const char *dir, struct argv_list *files)
{
    for (size_t i = 0; i < files->n; i++) {
        unlink(files->v[i]);
        char *sub = dir_of(files->v[i]);
        rmdir(sub);
        free(sub);
    }
    rmdir(dir);
}

/* Replaces every occurrence of from by to in the file at path. */
static void fix_depfile(const char *path, const char *from, const char *to)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return;
    struct acc_buf out = {0};
    size_t fl = strlen(from);
    const char *p = text;
    for (;;) {
        const char *hit = strstr(p, from);
        if (!hit)
            break;
        acc_buf_add(&out, p, (size_t)(hit - p));
        for (const char *c = to; *c; c++) {   /* make's escaping of spaces */
            if (*c == ' ')
                acc_buf_add(&out, "\\", 1);
            acc_buf_add(&out, c, 1);
        }
        p = hit + fl;
    }
    acc_buf_puts(&out, p);
    write_file(path, out.data, out.len);
    acc_buf_free(&out);
    free(text);
}

static char *exe_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        die("%s", "cannot find the driver's own path (/proc/self/exe)");
    buf[n] = 0;
    return dir_of(buf);
}

/* Held for the whole run (file scope: reachable until exit, so a leak
 * checker does not count them). */
static struct argv_list cmd, temps, depfix_from, depfix_to;
static char *self, *asc_inc, *acl_inc, *libdir;

int main(int argc, char **argv)
{
    const char *soc_name = getenv("SOC_VERSION");
    if (!soc_name || !*soc_name)
        soc_name = "Ascend910B1";
    const char *header_dir = NULL, *npu_arch = NULL;
    bool print_only = false, keep = false, verbose = false, compile_only = false,
         has_std = false;
    const char *cxx_env = getenv("ACLSIM_CXX");

    /* pass 1: driver options and the mode */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--aclsim-soc=", 13))
            soc_name = a + 13;
        else if (!strncmp(a, "--aclsim-launch-header-dir=", 27))
            header_dir = a + 27;
        else if (!strcmp(a, "--aclsim-print-rewritten"))
            print_only = true;
        else if (!strcmp(a, "--aclsim-keep-temps"))
            keep = true;
        else if (!strcmp(a, "--aclsim-verbose"))
            verbose = true;
        else if (!strncmp(a, "--aclsim-", 9))
            die("unknown driver option %s", a);
        else if (!strncmp(a, "--npu-arch=", 11))   /* CANN's bisheng: --npu-arch=dav-2201 */
            npu_arch = a + 11;
        else if (!strcmp(a, "-c") || !strcmp(a, "-S") || !strcmp(a, "-E") || !strcmp(a, "-M") ||
                 !strcmp(a, "-MM") || !strcmp(a, "-fsyntax-only"))
            compile_only = true;
        else if (!strncmp(a, "-std=", 5))
            has_std = true;
        else if (takes_value(a))
            i++;
    }
    const struct soc *soc = NULL;
    for (size_t i = 0; i < sizeof socs / sizeof *socs; i++)
        if (!strcmp(socs[i].name, soc_name))
            soc = &socs[i];
    if (!soc)
        die("unknown SoC \"%s\" (--aclsim-soc or SOC_VERSION): see docs/ascendc-driver.md",
            soc_name);
    if (npu_arch) {   /* the architecture wins: the first SoC of it when the SoC differs */
        unsigned want = 0;
        if (!strncmp(npu_arch, "dav-", 4))
            want = (unsigned)strtoul(npu_arch + 4, NULL, 10);
        for (size_t i = 0; want && soc->arch != want && i < sizeof socs / sizeof *socs; i++)
            if (socs[i].arch == want)
                soc = &socs[i];
        if (soc->arch != want)
            die("unknown NPU architecture \"%s\" (--npu-arch): see docs/ascendc-driver.md",
                npu_arch);
    }

    self = exe_dir();
    /* Each directory: the environment, else next to the executable (an
     * install), else the source / build tree the driver was built from. */
    const char *inc_env = getenv("ACLSIM_ASCENDC_INCLUDE");
    asc_inc = inc_env && *inc_env ? strdup(inc_env) : xasprintf("%s/../include/ascendc%s", self, "");
    char *in_tree = xasprintf("%s/ascendc%s", ACLSIM_CC_TREE_INCLUDE, "");
    if (!(inc_env && *inc_env) && !exists(asc_inc) && exists(in_tree)) {
        free(asc_inc);
        asc_inc = in_tree;
    } else {
        free(in_tree);
    }
    char *probe_h = xasprintf("%s/aclsim_ascendc.h%s", asc_inc, "");
    if (!exists(probe_h))
        die("the Ascend C headers are not in %s (kernel_operator.h, aclsim_ascendc.h): "
            "install aclsim, or set ACLSIM_ASCENDC_INCLUDE", asc_inc);
    free(probe_h);
    const char *acl_env = getenv("ACLSIM_INCLUDE");
    acl_inc = acl_env && *acl_env ? strdup(acl_env) : xasprintf("%s/../include%s", self, "");
    if (!(acl_env && *acl_env) && !exists(acl_inc)) {
        free(acl_inc);
        acl_inc = strdup(ACLSIM_CC_TREE_INCLUDE);
    }
    const char *lib_env = getenv("ACLSIM_LIBDIR");
    if (lib_env && *lib_env) {
        libdir = strdup(lib_env);
    } else {
        libdir = xasprintf("%s/../lib64%s", self, "");
        char *probe = xasprintf("%s/libascendcl.so%s", libdir, "");
        if (!exists(probe)) {
            free(libdir);
            libdir = xasprintf("%s/../lib%s", self, "");
            free(probe);
            probe = xasprintf("%s/libascendcl.so%s", libdir, "");
            if (!exists(probe)) {
                free(libdir);
                libdir = strdup(ACLSIM_CC_TREE_LIBDIR);
            }
        }
        free(probe);
    }

    /* the compiler */
    if (cxx_env && *cxx_env) {
        char *copy = strdup(cxx_env), *save = NULL;
        for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
            arg_add(&cmd, w);
        free(copy);
    }
    if (!cmd.n)
        arg_add(&cmd, "c++");

    char tmpl[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s/aclsim-cc.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    char *tmp = NULL;
    char arch[64], aicore[64], socdef[128];
    snprintf(arch, sizeof arch, "-D__NPU_ARCH__=%u", soc->arch);
    snprintf(aicore, sizeof aicore, "-D__CCE_AICORE__=%u", soc->arch / 10);
    snprintf(socdef, sizeof socdef, "-DACLSIM_ASCENDC_SOC=\"%s\"", soc->name);
    arg_add(&cmd, arch);
    arg_add(&cmd, aicore);
    arg_add(&cmd, socdef);
    if (!has_std)
        arg_add(&cmd, "-std=c++17");

    /* pass 2: inputs and flags, in order */
    const char *lang = NULL;   /* the user's -x, or NULL */
    const char *mf = NULL, *out = NULL;
    bool md = false, failed = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--aclsim-", 9))
            continue;
        /* bisheng options with no meaning on the CPU: the architecture (used
         * above), -dc (separate compilation is how C++ links anyway), and
         * --run-mode (CPU-debug defines come from the build) */
        if (!strncmp(a, "--npu-arch=", 11) || !strcmp(a, "-dc") || !strncmp(a, "--run-mode=", 11))
            continue;
        if (!strcmp(a, "-x") && i + 1 < argc) {
            lang = argv[++i];
            if (!strcmp(lang, "none"))
                lang = NULL;
            continue;
        }
        if (!strncmp(a, "-x", 2) && a[2]) {
            lang = a + 2;
            if (!strcmp(lang, "none"))
                lang = NULL;
            continue;
        }
        if (!strcmp(a, "-MD") || !strcmp(a, "-MMD"))
            md = true;
        if (!strcmp(a, "-MF") && i + 1 < argc)
            mf = argv[i + 1];
        if (!strcmp(a, "-o") && i + 1 < argc)
            out = argv[i + 1];
        if (a[0] == '-' && a[1]) {
            arg_add(&cmd, a);
            if (takes_value(a) && i + 1 < argc)
                arg_add(&cmd, argv[++i]);
            continue;
        }
        /* an input (a response file @file goes through as it is) */
        if (a[0] == '@') {
            arg_add(&cmd, a);
            continue;
        }
        bool asc = lang ? (!strcmp(lang, "asc") || !strcmp(lang, "c++") ||
                           !strcmp(lang, "cce"))
                        : is_cxx_source(a);
        if (!asc) {
            if (lang) {
                arg_add(&cmd, "-x");
                arg_add(&cmd, lang);
            } else if (is_c_source(a)) {
                arg_add(&cmd, "-x");
                arg_add(&cmd, "none");
            }
            arg_add(&cmd, a);
            if (lang) {
                arg_add(&cmd, "-x");
                arg_add(&cmd, "none");
            }
            continue;
        }
        size_t len;
        char *src = read_file(a, &len);
        if (!src)
            die("cannot read %s", a);
        struct acc_result res;
        bool ok = acc_rewrite(src, len, a, header_dir != NULL, &res);
        free(src);
        if (!ok) {
            fputs(res.errors.data, stderr);
            acc_result_free(&res);
            failed = true;
            continue;
        }
        if (print_only) {
            fwrite(res.out.data, 1, res.out.len, stdout);
            acc_result_free(&res);
            continue;
        }
        if (header_dir) {
            mkdirs(header_dir);
            for (size_t k = 0; k < res.nkernels; k++) {
                if (res.kernels[k].is_template)
                    continue;
                struct acc_buf h = {0};
                acc_launch_header(&res.kernels[k], &h);
                char *path = xasprintf("%s/aclrtlaunch_%s.h", header_dir, res.kernels[k].name);
                if (!update_file(path, h.data, h.len))
                    die("cannot write %s", path);
                free(path);
                acc_buf_free(&h);
            }
        }
        if (!tmp) {
            tmp = mkdtemp(tmpl);
            if (!tmp)
                die("cannot create a temporary directory %s", tmpl);
        }
        /* same base name (so default output names are g++'s); a unique
         * subdirectory per input in case two inputs share a base name */
        char sub[32];
        snprintf(sub, sizeof sub, "%d", i);
        char *subdir = xasprintf("%s/%s", tmp, sub);
        mkdir(subdir, 0700);
        char *copy = xasprintf("%s/%s", subdir, base_of(a));
        if (!write_file(copy, res.out.data, res.out.len))
            die("cannot write %s", copy);
        arg_add(&temps, copy);
        arg_add(&depfix_from, copy);
        arg_add(&depfix_to, a);
        char *srcdir = dir_of(a);
        arg_add(&cmd, "-iquote");
        arg_add(&cmd, srcdir);
        arg_add(&cmd, "-x");
        arg_add(&cmd, "c++");
        arg_add(&cmd, copy);
        arg_add(&cmd, "-x");
        arg_add(&cmd, "none");
        free(srcdir);
        free(copy);
        free(subdir);
        acc_result_free(&res);
    }
    if (failed || print_only) {
        if (tmp) {
            remove_tree(tmp, &temps);
        }
        return failed ? 1 : 0;
    }
    /* include paths go last among -I, so the user's come first */
    char *i1 = xasprintf("-I%s%s", asc_inc, ""), *i2 = xasprintf("-I%s%s", acl_inc, "");
    arg_add(&cmd, i1);
    arg_add(&cmd, i2);
    free(i1);
    free(i2);
    if (!compile_only) {
        char *l1 = xasprintf("-L%s%s", libdir, ""), *l2 = xasprintf("-Wl,-rpath,%s%s", libdir, "");
        arg_add(&cmd, l1);
        arg_add(&cmd, l2);
        arg_add(&cmd, "-lascendcl");
        arg_add(&cmd, "-pthread");
        free(l1);
        free(l2);
    }
    int rc = run(cmd.v, verbose);
    if (rc == 0 && md && depfix_from.n) {
        /* the dependency file: -MF, else the output's name with .d */
        char *dep = NULL;
        if (mf)
            dep = strdup(mf);
        else if (out) {
            dep = strdup(out);
            char *dot = strrchr(dep, '.');
            if (dot && dot > strrchr(dep, '/'))
                *dot = 0;
            char *d2 = xasprintf("%s.d%s", dep, "");
            free(dep);
            dep = d2;
        }
        if (dep) {
            for (size_t k = 0; k < depfix_from.n; k++)
                fix_depfile(dep, depfix_from.v[k], depfix_to.v[k]);
            free(dep);
        } else {
            /* -c without -o: one <source base name>.d per source, here */
            for (size_t k = 0; k < depfix_from.n; k++) {
                char *d = strdup(base_of(depfix_to.v[k]));
                char *dot = strrchr(d, '.');
                if (dot)
                    *dot = 0;
                char *name = xasprintf("%s.d%s", d, "");
                fix_depfile(name, depfix_from.v[k], depfix_to.v[k]);
                free(name);
                free(d);
            }
        }
    }
    if (tmp) {
        if (keep)
            fprintf(stderr, "aclsim-cc: temporary files kept in %s\n", tmp);
        else
            remove_tree(tmp, &temps);
    }
    return rc;
}
