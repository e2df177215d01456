/*
 * aclsim-cc's tokenizer and rewriter (tools/aclsim-cc/rewrite.c) on tricky
 * inputs: comments, string / raw-string / character literals, digit
 * separators, template >>, <<< inside macros and conditional code, launches
 * spanning lines, __gm__ variables in kernel and host code, #line and line
 * preservation, errors with file:line:col, and the launch header text.
 */
#include "helpers/common.h"

#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

static struct acc_result res;

static const char *rw(const char *src)
{
    acc_result_free(&res);
    acc_rewrite(src, strlen(src), "u.asc", false, &res);
    return res.out.data;
}

/* Line (1-based) of the first occurrence of needle in text, or 0. */
static int line_of(const char *text, const char *needle)
{
    const char *hit = strstr(text, needle);
    if (!hit)
        return 0;
    int line = 1;
    for (const char *p = text; p < hit; p++)
        line += *p == '\n';
    return line;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

#define PRELUDE_LINES 2   /* #include "aclsim_ascendc.h" and #line 1 "u.asc" */

static void test_prelude_and_line(void **state)
{
    (void)state;
    const char *out = rw("int a;\nint b;\n");
    assert_non_null(strstr(out, "#include \"aclsim_ascendc.h\"\n#line 1 \"u.asc\"\nint a;\nint b;\n"));
    assert_int_equal(res.errors.len, 0);
}

static void test_comments_and_literals_untouched(void **state)
{
    (void)state;
    const char *src =
        "// k<<<1, nullptr, s>>>(x); __gm__ int c;\n"
        "/* k<<<1, nullptr, s>>>(x);\n   __gm__ int d; */\n"
        "const char *s1 = \"k<<<1, nullptr, s>>>(x)\";\n"
        "const char *s2 = R\"x(k<<<1>>>() )\" \" )x\";\n"
        "const char *s3 = u8R\"(k<<<2>>>())\";\n"
        "char c1 = '<', c2 = '\\'', c3 = '\"';\n"
        "int big = 1'000'000; int hex = 0xFF'FF;\n"
        "void f(void *s) { k<<<1, nullptr, s>>>(big); }\n";
    const char *out = rw(src);
    assert_int_equal(res.errors.len, 0);
    assert_int_equal(count(out, "<<<"), 5);   /* the comments' and literals' */
    assert_int_equal(count(out, "launcher<&k>"), 1);
    assert_int_equal(line_of(out, "launcher<&k>"), 9 + PRELUDE_LINES);
    assert_null(strstr(out, "aclsim__var_c"));
    assert_null(strstr(out, "aclsim__var_d"));
}

static void test_template_closers_are_not_launches(void **state)
{
    (void)state;
    const char *src =
        "std::map<int, std::vector<std::vector<int>>> m;\n"
        "A<B<C>>> x;\n"
        "bool b = 1 >> 2 > 0;\n";
    const char *out = rw(src);
    assert_int_equal(res.errors.len, 0);
    assert_non_null(strstr(out, "std::map<int, std::vector<std::vector<int>>> m;"));
    assert_non_null(strstr(out, "A<B<C>>> x;"));
}

static void test_templated_and_qualified_kernels(void **state)
{
    (void)state;
    const char *out = rw("void f(void *s) { ns::k<T, 8><<<n, nullptr, s>>>(a, b); }\n");
    assert_int_equal(res.errors.len, 0);
    assert_non_null(strstr(out, "::aclsim_asc::fn<decltype(&ns::k<T,8>)>::template "
                                "launcher<&ns::k<T,8>>(\"ns::k<T,8>\", __FILE__, __LINE__, "
                                "n, nullptr, s)(a, b);"));
}

static void test_launch_in_macro_keeps_continuations(void **state)
{
    (void)state;
    const char *src =
        "#define LAUNCH(s) \\\n"
        "    k<<<2, nullptr, \\\n"
        "        s>>>(42)\n"
        "int x = LAUNCH(0);\n";
    const char *out = rw(src);
    assert_int_equal(res.errors.len, 0);
    assert_non_null(strstr(out, "#define LAUNCH(s) \\\n    ::aclsim_asc::fn<decltype(&k)>"));
    assert_non_null(strstr(out, "nullptr, \\\n        s)(42)\nint x = LAUNCH(0);"));
}

static void test_conditional_code_and_directives_inside_arguments(void **state)
{
    (void)state;
    const char *src =
        "void f(void *s) {\n"
        "#if USE_A\n"
        "    a<<<1, nullptr, s>>>(1);\n"
        "#else\n"
        "    b<<<1, nullptr, s>>>(2);\n"
        "#endif\n"
        "    c<<<1,\n"
        "#ifdef X\n"
        "        nullptr,\n"
        "#else\n"
        "        0,\n"
        "#endif\n"
        "        s>>>(3);\n"
        "}\n"
        "int last;\n";
    const char *out = rw(src);
    assert_int_equal(res.errors.len, 0);
    assert_int_equal(line_of(out, "launcher<&a>"), 3 + PRELUDE_LINES);
    assert_int_equal(line_of(out, "launcher<&b>"), 5 + PRELUDE_LINES);
    assert_int_equal(line_of(out, "launcher<&c>"), 7 + PRELUDE_LINES);
    assert_int_equal(line_of(out, "s)(3);"), 13 + PRELUDE_LINES);
    assert_int_equal(line_of(out, "int last;"), 15 + PRELUDE_LINES);
}

static void test_gm_variables(void **state)
{
    (void)state;
    const char *src =
        "__gm__ float w[16] = {1, 2};\n"
        "static __gm__ int hidden;\n"
        "extern __gm__ int elsewhere[4];\n"
        "__gm__ int a = 1, b[2];\n"
        "namespace ns { __gm__ int inner; }\n"
        "struct S { int w; };\n"
        "__aicore__ inline int helper() { return hidden; }\n"
        "extern \"C\" __global__ __aicore__ void k(GM_ADDR out, S s)\n"
        "{\n"
        "    S *p = &s;\n"
        "    w[0] = s.w + p->w + ns::inner + ::a + elsewhere[0];\n"
        "    const char *t = \"w\";\n"
        "}\n"
        "void host() { w[1] = 2; }\n";
    const char *out = rw(src);
    assert_int_equal(res.errors.len, 0);
    assert_non_null(strstr(out, "aclsimVar aclsim__var_w = ::aclsim_asc::make_var(&w, sizeof(w)"));
    assert_non_null(strstr(out, "static aclsimVar aclsim__var_hidden"));
    assert_non_null(strstr(out, "extern aclsimVar aclsim__var_elsewhere;"));
    assert_null(strstr(out, "aclsimVar aclsim__var_elsewhere ="));
    assert_non_null(strstr(out, "aclsim__var_a ="));
    assert_non_null(strstr(out, "aclsim__var_b ="));
    assert_non_null(strstr(out, "aclsim__var_inner ="));
    assert_non_null(strstr(out, "return ACLSIM_ASC_DEV(hidden, aclsim__var_hidden);"));
    assert_non_null(strstr(out, "ACLSIM_ASC_DEV(w, aclsim__var_w)[0] = s.w + p->w + "
                                "ACLSIM_ASC_DEV(ns::inner, ns::aclsim__var_inner) + "
                                "ACLSIM_ASC_DEV(::a, ::aclsim__var_a) + "
                                "ACLSIM_ASC_DEV(elsewhere, aclsim__var_elsewhere)[0];"));
    assert_non_null(strstr(out, "const char *t = \"w\";"));
    assert_non_null(strstr(out, "void host() { w[1] = 2; }"));   /* host code: the symbol */
    assert_int_equal(line_of(out, "void host()"), 14 + PRELUDE_LINES);
    /* the kernel is registered after its body, on its closing line */
    assert_int_equal(line_of(out, "registrar<&k>"), 13 + PRELUDE_LINES);
    assert_int_equal(res.nkernels, 1);
}

static void test_class_members_and_templates(void **state)
{
    (void)state;
    const char *src =
        "__gm__ int g;\n"
        "class KernelAdd {\n"
        "public:\n"
        "    __aicore__ inline KernelAdd() : x(1), y{2} {}\n"
        "    __aicore__ inline void Process() { g += x; }\n"
        "    void HostOnly() { g = 0; }\n"
        "    int x, y;\n"
        "};\n"
        "template <typename T> __global__ __aicore__ void tk(T v) { g = (int)v; }\n";
    const char *out = rw(src);
    assert_int_equal(res.errors.len, 0);
    assert_non_null(strstr(out, "void Process() { ACLSIM_ASC_DEV(g, aclsim__var_g) += x; }"));
    assert_non_null(strstr(out, "void HostOnly() { g = 0; }"));
    assert_non_null(strstr(out, "{ ACLSIM_ASC_DEV(g, aclsim__var_g) = (int)v; }"));
    assert_int_equal(res.nkernels, 1);
    assert_true(res.kernels[0].is_template);
    assert_null(strstr(out, "registrar<&tk>"));   /* instantiations register at launch */
}

static void test_parameters_and_locals_hide_gm_variables(void **state)
{
    (void)state;
    const char *src =
        "__gm__ int c;\n"
        "__aicore__ int by_param(int c) { return c; }\n"
        "__aicore__ int by_ptr_param(__gm__ int *c, int x) { return *c + x; }\n"
        "__global__ __aicore__ void k(int x)\n"
        "{\n"
        "    x = x * c;\n"
        "    {\n"
        "        int c = 2;\n"
        "        x += c;\n"
        "    }\n"
        "    for (int c = 0; c < 3; c++)\n"
        "        x += c;\n"
        "    x += c;\n"
        "    uint32_t *c2 = nullptr, *p = &c;\n"
        "    {\n"
        "        const float *c;\n"
        "        (void)c;\n"
        "    }\n"
        "    c = x + (int)p[0];\n"
        "}\n";
    const char *out = rw(src);
    assert_int_equal(res.errors.len, 0);
    assert_non_null(strstr(out, "by_param(int c) { return c; }"));
    assert_non_null(strstr(out, "by_ptr_param(__gm__ int *c, int x) { return *c + x; }"));
    assert_non_null(strstr(out, "x = x * ACLSIM_ASC_DEV(c, aclsim__var_c);"));
    assert_non_null(strstr(out, "int c = 2;\n        x += c;\n"));
    assert_non_null(strstr(out, "for (int c = 0; c < 3; c++)\n        x += c;\n"
                                "    x += ACLSIM_ASC_DEV(c, aclsim__var_c);"));
    assert_non_null(strstr(out, "*p = &ACLSIM_ASC_DEV(c, aclsim__var_c);"));
    assert_non_null(strstr(out, "const float *c;\n        (void)c;"));
    assert_non_null(strstr(out, "ACLSIM_ASC_DEV(c, aclsim__var_c) = x + (int)p[0];"));
}

static void test_asm_trap_in_kernel_code(void **state)
{
    (void)state;
    const char *out = rw("__global__ __aicore__ void k() { asm(\"trap\"); }\n"
                         "__aicore__ void f() { __asm__ volatile(\" trap; \"); }\n"
                         "void host() { asm(\"nop\"); }\n");
    assert_int_equal(res.errors.len, 0);
    assert_non_null(strstr(out, "void k() { trap(); }"));
    assert_non_null(strstr(out, "void f() { trap(); }"));
    assert_non_null(strstr(out, "void host() { asm(\"nop\"); }"));
}

static void test_launch_functions_and_header(void **state)
{
    (void)state;
    const char *src = "extern \"C\" __global__ __aicore__ void add_custom(GM_ADDR x, "
                      "__gm__ float *y, uint32_t n, const Tiling t) {}\n";
    acc_result_free(&res);
    assert_true(acc_rewrite(src, strlen(src), "k.asc", true, &res));
    assert_non_null(strstr(res.out.data, "extern \"C\" uint32_t aclrtlaunch_add_custom(uint32_t "
                                         "blockDim, aclrtStream stream, void* x, void* y, "
                                         "uint32_t n, const Tiling t)"));
    assert_non_null(strstr(res.out.data, "#line 1 \"k.asc\""));
    struct acc_buf h = {0};
    acc_launch_header(&res.kernels[0], &h);
    assert_non_null(strstr(h.data, "#ifndef HEADER_ACLRTLAUNCH_ADD_CUSTOM_H"));
    assert_non_null(strstr(h.data, "#include \"acl/acl_base.h\""));
    assert_non_null(strstr(h.data, "#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func"));
    assert_non_null(strstr(h.data, "extern \"C\" uint32_t aclrtlaunch_add_custom(uint32_t blockDim, "
                                   "aclrtStream stream, void* x, void* y, uint32_t n, const Tiling t);"));
    acc_buf_free(&h);
}

static void test_errors_name_file_line_column(void **state)
{
    (void)state;
    rw("int a;\nvoid f() { k<<<1, nullptr, s(1); }\n");
    assert_non_null(strstr(res.errors.data, "u.asc:2:13: error: <<< without its >>>"));
    rw("int a;\nvoid f() { <<<1, 2, 3>>>(x); }\n");
    assert_non_null(strstr(res.errors.data, "u.asc:2:12: error: <<< must follow a kernel name"));
    rw("int a;\nvoid f() { k<<<1, 2, 3>>>; }\n");
    assert_non_null(strstr(res.errors.data, "u.asc:2:23: error: >>> must be followed by"));
    rw("int a;\nconst char *s = \"open\n");
    assert_non_null(strstr(res.errors.data, "u.asc:2:17: error: missing terminating \" character"));
    rw("/* open\n\n");
    assert_non_null(strstr(res.errors.data, "u.asc:1:1: error: unterminated comment"));
    rw("const char *r = R\"ab(never closed\n");
    assert_non_null(strstr(res.errors.data, "u.asc:1:17: error: unterminated raw string"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prelude_and_line),
        cmocka_unit_test(test_comments_and_literals_untouched),
        cmocka_unit_test(test_template_closers_are_not_launches),
        cmocka_unit_test(test_templated_and_qualified_kernels),
        cmocka_unit_test(test_launch_in_macro_keeps_continuations),
        cmocka_unit_test(test_conditional_code_and_directives_inside_arguments),
        cmocka_unit_test(test_gm_variables),
        cmocka_unit_test(test_class_members_and_templates),
        cmocka_unit_test(test_parameters_and_locals_hide_gm_variables),
        cmocka_unit_test(test_asm_trap_in_kernel_code),
        cmocka_unit_test(test_launch_functions_and_header),
        cmocka_unit_test(test_errors_name_file_line_column),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    acc_result_free(&res);
    return rc;
}
