/*
 * aclsim-cc's rewriter: tokenizer, structural parse, rewriting (design in
 * main.c). Every replacement keeps the line structure of the original: text
 * is only inserted on existing lines, and a replaced span's newlines are
 * written again (as backslash-newline inside a directive), so with the
 * leading #line every token stays on its user line.
 */
#include "rewrite.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffers ------------------------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "aclsim-cc: out of memory\n");
        exit(1);
    }
    return q;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void acc_buf_add(struct acc_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void acc_buf_puts(struct acc_buf *b, const char *s) { acc_buf_add(b, s, strlen(s)); }

void acc_buf_printf(struct acc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    char *tmp = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    va_end(ap);
    acc_buf_add(b, tmp, (size_t)n);
    free(tmp);
}

void acc_buf_free(struct acc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ---- tokenizer ------------------------------------------------------------------ */

enum { T_ID, T_NUM, T_STR, T_CHR, T_PUNCT };

struct tok {
    size_t b, e;        /* [b, e) in the source */
    int kind;
    int line, col;
    bool directive;     /* part of a preprocessor directive line */
    bool define;        /* part of a #define (its tokens are rewritten too) */
    bool glued;         /* no space or comment between this token and the previous */
};

struct lexer {
    const char *s;
    size_t n, i;
    int line;
    size_t line_start;
    struct tok *t;
    size_t nt, cap;
    struct acc_buf *errors;
    const char *display;
    bool ok;
};

static void lex_error(struct lexer *L, int line, int col, const char *msg)
{
    acc_buf_printf(L->errors, "%s:%d:%d: error: %s\n", L->display, line, col, msg);
    L->ok = false;
}

/* Skips backslash-newline splices at i. */
static size_t skip_splices(struct lexer *L, size_t i)
{
    while (i + 1 < L->n && L->s[i] == '\\' &&
           (L->s[i + 1] == '\n' || (L->s[i + 1] == '\r' && i + 2 < L->n && L->s[i + 2] == '\n'))) {
        i += L->s[i + 1] == '\n' ? 2 : 3;
        L->line++;
        L->line_start = i;
    }
    return i;
}

static char at(struct lexer *L, size_t i) { return i < L->n ? L->s[i] : 0; }

static bool idchar(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

static bool is_string_prefix(const char *s, size_t n)
{
    static const char *const p[] = {"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        if (strlen(p[i]) == n && !memcmp(p[i], s, n))
            return true;
    return false;
}

static void push(struct lexer *L, size_t b, size_t e, int kind, int line, int col, bool dir,
                 bool def, bool glued)
{
    if (L->nt == L->cap) {
        L->cap = L->cap ? 2 * L->cap : 1024;
        L->t = xrealloc(L->t, L->cap * sizeof *L->t);
    }
    L->t[L->nt++] = (struct tok){b, e, kind, line, col, dir, def, glued};
}

/* Counts newlines in [b, e) to keep L->line right after multi-line tokens. */
static void count_lines(struct lexer *L, size_t b, size_t e)
{
    for (size_t i = b; i < e; i++)
        if (L->s[i] == '\n') {
            L->line++;
            L->line_start = i + 1;
        }
}

/* A quoted literal starting at the quote q; returns the end (after the quote). */
static size_t lex_quoted(struct lexer *L, size_t q, int line, int col)
{
    char quote = L->s[q];
    size_t i = q + 1;
    while (i < L->n) {
        char c = L->s[i];
        if (c == '\\' && i + 1 < L->n) {
            if (L->s[i + 1] == '\n') {
                L->line++;
                L->line_start = i + 2;
            }
            i += 2;
            continue;
        }
        if (c == quote)
            return i + 1;
        if (c == '\n') {
            lex_error(L, line, col, quote == '"' ? "missing terminating \" character"
                                                 : "missing terminating ' character");
            return i;
        }
        i++;
    }
    lex_error(L, line, col, "unterminated literal at end of file");
    return i;
}

/* A raw string R"delim( ... )delim" with its opening quote at q. */
static size_t lex_raw(struct lexer *L, size_t q, int line, int col)
{
    size_t d = q + 1;
    while (d < L->n && L->s[d] != '(' && d - q - 1 < 16 && L->s[d] != '"' && L->s[d] != '\n')
        d++;
    if (at(L, d) != '(') {
        lex_error(L, line, col, "invalid raw string delimiter");
        return d;
    }
    size_t dl = d - q - 1;
    const char *delim = L->s + q + 1;
    for (size_t i = d + 1; i < L->n; i++) {
        if (L->s[i] == ')' && i + 1 + dl < L->n && !memcmp(L->s + i + 1, delim, dl) &&
            L->s[i + 1 + dl] == '"') {
            count_lines(L, q, i + dl + 2);
            return i + dl + 2;
        }
    }
    lex_error(L, line, col, "unterminated raw string");
    count_lines(L, q, L->n);
    return L->n;
}

static bool tokenize(struct lexer *L)
{
    bool line_begin = true, in_dir = false, in_define = false, glued = false;
    size_t i = 0;
    while (i < L->n) {
        i = skip_splices(L, i);
        if (i >= L->n)
            break;
        char c = L->s[i];
        if (c == '\n') {
            L->line++;
            L->line_start = ++i;
            line_begin = true;
            in_dir = in_define = false;
            glued = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            glued = false;
            continue;
        }
        if (c == '/' && at(L, i + 1) == '/') {   /* to the end of the line (splices continue it) */
            while (i < L->n && L->s[i] != '\n') {
                if (L->s[i] == '\\' && at(L, i + 1) == '\n') {
                    L->line++;
                    L->line_start = i + 2;
                    i += 2;
                    continue;
                }
                i++;
            }
            glued = false;
            continue;
        }
        if (c == '/' && at(L, i + 1) == '*') {
            int line = L->line, col = (int)(i - L->line_start) + 1;
            size_t j = i + 2;
            while (j + 1 < L->n && !(L->s[j] == '*' && L->s[j + 1] == '/'))
                j++;
            if (j + 1 >= L->n) {
                lex_error(L, line, col, "unterminated comment");
                return false;
            }
            count_lines(L, i, j + 2);
            i = j + 2;
            glued = false;
            continue;
        }
        int line = L->line, col = (int)(i - L->line_start) + 1;
        size_t b = i;
        int kind;
        if (c == '#' && line_begin) {
            in_dir = true;
            /* which directive? */
            size_t j = i + 1;
            while (j < L->n && (L->s[j] == ' ' || L->s[j] == '\t'))
                j++;
            if (L->n - j >= 6 && !memcmp(L->s + j, "define", 6) && !idchar(at(L, j + 6)))
                in_define = true;
            i++;
            kind = T_PUNCT;
        } else if (idchar(c) && !isdigit((unsigned char)c)) {
            while (i < L->n && idchar(L->s[i]))
                i++;
            kind = T_ID;
            if (at(L, i) == '"' || (at(L, i) == '\'' && L->s[i - 1] != 'R')) {
                if (is_string_prefix(L->s + b, i - b)) {
                    bool raw = L->s[i - 1] == 'R';
                    kind = L->s[i] == '"' ? T_STR : T_CHR;
                    i = raw ? lex_raw(L, i, line, col) : lex_quoted(L, i, line, col);
                    while (i < L->n && idchar(L->s[i]))   /* user-defined literal suffix */
                        i++;
                }
            }
        } else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)at(L, i + 1)))) {
            i++;
            for (;;) {
                char d = at(L, i);
                if ((d == '+' || d == '-') && strchr("eEpP", L->s[i - 1]))
                    i++;
                else if (idchar(d) || d == '.')
                    i++;
                else if (d == '\'' && idchar(at(L, i + 1)))   /* digit separator */
                    i += 2;
                else
                    break;
            }
            kind = T_NUM;
        } else if (c == '"' || c == '\'') {
            kind = c == '"' ? T_STR : T_CHR;
            if (in_dir && !in_define && c == '\'') {   /* e.g. #error don't: not a literal */
                i++;
                kind = T_PUNCT;
            } else {
                i = lex_quoted(L, i, line, col);
                while (i < L->n && idchar(L->s[i]))
                    i++;
            }
        } else if (c == ':' && at(L, i + 1) == ':') {
            i += 2;
            kind = T_PUNCT;
        } else if (c == '-' && at(L, i + 1) == '>') {
            i += 2;
            kind = T_PUNCT;
        } else {
            i++;
            kind = T_PUNCT;
        }
        push(L, b, i, kind, line, col, in_dir, in_define, glued);
        line_begin = false;
        glued = true;
        if (!L->ok)
            return false;
    }
    return L->ok;
}

/* ---- helpers over tokens ------------------------------------------------------------ */

struct rw {
    struct lexer L;
    const struct tok *t;
    size_t nt;
    const char *display;
    /* replacements, in source order: [b, e) -> text */
    struct repl { size_t b, e; char *text; } *r;
    size_t nr, rcap;
    /* __gm__ variables: names (with the namespace path they live in) */
    struct gmvar { char *name; char *ns; } *vars;
    size_t nvars;
    /* kernel-code bodies: token index ranges */
    struct range { size_t b, e; } *bodies;
    size_t nbodies;
    struct acc_result *res;
    bool launch_funcs;
    struct acc_buf tail;   /* appended after the file */
};

static bool tis(const struct rw *w, size_t i, const char *s)
{
    if (i >= w->nt)
        return false;
    size_t n = w->t[i].e - w->t[i].b;
    return strlen(s) == n && !memcmp(w->L.s + w->t[i].b, s, n);
}

static char *ttext(const struct rw *w, size_t i)
{
    return xstrndup(w->L.s + w->t[i].b, w->t[i].e - w->t[i].b);
}

static void rw_error(struct rw *w, size_t i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rw_error(struct rw *w, size_t i, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = i < w->nt ? w->t[i].line : w->L.line, col = i < w->nt ? w->t[i].col : 1;
    acc_buf_printf(&w->res->errors, "%s:%d:%d: error: %s\n", w->display, line, col, msg);
}

static void add_repl(struct rw *w, size_t b, size_t e, char *text)
{
    if (w->nr == w->rcap) {
        w->rcap = w->rcap ? 2 * w->rcap : 64;
        w->r = xrealloc(w->r, w->rcap * sizeof *w->r);
    }
    w->r[w->nr++] = (struct repl){b, e, text};
}

static int repl_cmp(const void *a, const void *b)
{
    const struct repl *x = a, *y = b;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return x->e < y->e ? -1 : x->e > y->e;
}

/* Tokens [b, e) as compact text (a space only between two word tokens). */
static char *join(const struct rw *w, size_t b, size_t e)
{
    struct acc_buf out = {0};
    for (size_t i = b; i < e; i++) {
        if (i > b && (w->t[i].kind != T_PUNCT && w->t[i - 1].kind != T_PUNCT))
            acc_buf_puts(&out, " ");
        else if (i > b && !w->t[i].glued && w->t[i].kind == T_PUNCT && w->t[i - 1].kind == T_PUNCT)
            acc_buf_puts(&out, " ");   /* keep "> >" apart */
        acc_buf_add(&out, w->L.s + w->t[i].b, w->t[i].e - w->t[i].b);
    }
    if (!out.data)
        acc_buf_puts(&out, "");
    return out.data;
}

/* A string literal holding s. */
static void add_cstring(struct acc_buf *b, const char *s)
{
    acc_buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            acc_buf_add(b, "\\", 1);
        acc_buf_add(b, s, 1);
    }
    acc_buf_puts(b, "\"");
}

static bool is_open(const struct rw *w, size_t i)
{
    return tis(w, i, "(") || tis(w, i, "[") || tis(w, i, "{");
}
static bool is_close(const struct rw *w, size_t i)
{
    return tis(w, i, ")") || tis(w, i, "]") || tis(w, i, "}");
}

/* Index of the token closing the bracket opened at i (skipping directives). */
static size_t match_close(const struct rw *w, size_t i)
{
    int depth = 0;
    for (size_t j = i; j < w->nt; j++) {
        if (w->t[j].directive && !w->t[i].directive)
            continue;
        if (is_open(w, j))
            depth++;
        else if (is_close(w, j) && --depth == 0)
            return j;
    }
    return w->nt;
}

/* ---- <<<>>> launches -------------------------------------------------------------------- */

static bool three(const struct rw *w, size_t i, const char *c)
{
    return i + 2 < w->nt && tis(w, i, c) && tis(w, i + 1, c) && tis(w, i + 2, c) &&
           w->t[i + 1].glued && w->t[i + 2].glued;
}

static void rewrite_launches(struct rw *w)
{
    for (size_t i = 0; i < w->nt; i++) {
        if (w->t[i].directive && !w->t[i].define)
            continue;
        if (!three(w, i, "<"))
            continue;
        bool dir = w->t[i].directive;
        /* the kernel expression before <<<: [ns::]name[<targs>] */
        size_t s = i;
        if (s > 0 && tis(w, s - 1, ">")) {
            int depth = 0;
            size_t j = s - 1;
            for (;; j--) {
                if (tis(w, j, ">"))
                    depth++;
                else if (tis(w, j, "<") && --depth == 0)
                    break;
                if (j == 0)
                    break;
            }
            if (depth != 0 || j == 0) {
                rw_error(w, i, "<<<: cannot find the kernel's template arguments");
                continue;
            }
            s = j;
        }
        if (s == 0 || w->t[s - 1].kind != T_ID) {
            rw_error(w, i, "<<< must follow a kernel name (kernel<<<blocks, ctrl, stream>>>(args))");
            continue;
        }
        s--;
        while (s >= 2 && tis(w, s - 1, "::") && w->t[s - 2].kind == T_ID)
            s -= 2;
        if (s >= 1 && tis(w, s - 1, "::"))
            s--;
        /* the closing >>> at depth 0 */
        size_t j = i + 3, close = 0;
        int depth = 0;
        for (; j < w->nt; j++) {
            if (w->t[j].directive != dir && !(dir == false && w->t[j].directive))
                break;
            if (w->t[j].directive && !dir)
                continue;
            if (is_open(w, j))
                depth++;
            else if (is_close(w, j)) {
                if (--depth < 0)
                    break;
            } else if (depth == 0 && three(w, j, ">")) {
                close = j;
                break;
            } else if (depth == 0 && tis(w, j, ";"))
                break;
        }
        if (!close) {
            rw_error(w, i, "<<< without its >>>");
            continue;
        }
        if (!tis(w, close + 3, "(")) {
            rw_error(w, close, ">>> must be followed by the kernel's arguments in parentheses");
            continue;
        }
        char *k = join(w, s, i);
        struct acc_buf r = {0};
        acc_buf_printf(&r, "::aclsim_asc::fn<decltype(&%s)>::template launcher<&%s>(", k, k);
        add_cstring(&r, k);
        acc_buf_puts(&r, ", __FILE__, __LINE__, ");
        free(k);
        add_repl(w, w->t[s].b, w->t[i + 2].e, r.data);
        add_repl(w, w->t[close].b, w->t[close + 2].e, xstrndup(")", 1));
        i = close + 2;
    }
}

/* ---- structure: scopes, __gm__ declarations, kernel-code bodies, kernels ---------------- */

static const char *const type_words[] = {
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool",
    "const", "volatile", "struct", "class", "union", "enum", "typename", "__restrict__",
    "__restrict", "restrict", "__gm__", "__ubuf__", "GM_ADDR", "half", "wchar_t",
    "char16_t", "char32_t", NULL};

static bool is_type_word(const struct rw *w, size_t i)
{
    for (int k = 0; type_words[k]; k++)
        if (tis(w, i, type_words[k]))
            return true;
    return false;
}

static bool contains(const struct rw *w, size_t b, size_t e, const char *s)
{
    for (size_t i = b; i < e; i++)
        if (tis(w, i, s))
            return true;
    return false;
}

/* First token at bracket depth 0 in [b, e) equal to s, or e. */
static size_t find0(const struct rw *w, size_t b, size_t e, const char *s)
{
    int depth = 0;
    for (size_t i = b; i < e; i++) {
        if (depth == 0 && tis(w, i, s))
            return i;
        if (is_open(w, i))
            depth++;
        else if (is_close(w, i))
            depth--;
    }
    return e;
}

/* The declarator-id of one declarator [b, e) (tokens before any initializer). */
static size_t declarator_name(const struct rw *w, size_t b, size_t e)
{
    size_t last = e;
    int angle = 0;
    for (size_t i = b; i < e; i++) {
        if (tis(w, i, "<"))
            angle++;
        else if (tis(w, i, ">") && angle)
            angle--;
        if (angle)
            continue;
        if (tis(w, i, "(") && i + 1 < e && (tis(w, i + 1, "*") || tis(w, i + 1, "&"))) {
            size_t c = match_close(w, i);
            return declarator_name(w, i + 1, c < e ? c : e);
        }
        if (tis(w, i, "[") || tis(w, i, "(") || tis(w, i, "=") || tis(w, i, "{"))
            break;
        if (tis(w, i, "__attribute__") || tis(w, i, "alignas")) {
            if (tis(w, i + 1, "("))
                i = match_close(w, i + 1);
            continue;
        }
        if (w->t[i].kind == T_ID && !is_type_word(w, i) && !tis(w, i, "static") &&
            !tis(w, i, "extern") && !tis(w, i, "inline") && !tis(w, i, "constexpr"))
            last = i;
    }
    return last;
}

/* The scope stack holds a namespace's name, ANON_NS for an unnamed one, and
 * NULL for a linkage block (extern "C" { }). */
#define ANON_NS "(anonymous)"

/* Whether the scope is the global namespace (linkage blocks aside). */
static bool global_scope(char **ns, size_t depth)
{
    for (size_t i = 0; i < depth; i++)
        if (ns[i])
            return false;
    return true;
}

static char *ns_path(char **ns, size_t depth)
{
    struct acc_buf b = {0};
    acc_buf_puts(&b, "");
    for (size_t i = 0; i < depth; i++)
        if (ns[i] && strcmp(ns[i], ANON_NS)) {
            acc_buf_puts(&b, ns[i]);
            acc_buf_puts(&b, "::");
        }
    return b.data;
}

static void gm_declaration(struct rw *w, size_t b, size_t e, char **ns, size_t nsdepth)
{
    /* e is the ';' */
    bool is_extern = contains(w, b, e, "extern"), is_static = contains(w, b, e, "static");
    if (contains(w, b, e, "typedef") || contains(w, b, e, "using") ||
        contains(w, b, e, "__global__") || contains(w, b, e, "__aicore__") ||
        tis(w, b, "template") || contains(w, b, e, "friend"))
        return;
    /* Descriptors of global variables have C linkage, as ACLSIM_DEVICE_VAR's
     * in a C file, so both styles can refer to each other's variables;
     * inside a namespace they have C++ linkage (so ns1::v and ns2::v differ). */
    struct acc_buf ins = {0};
    acc_buf_puts(&ins, global_scope(ns, nsdepth) ? " extern \"C\" {" : " extern \"C++\" {");
    size_t d = b;
    int nnames = 0;
    while (d < e) {
        size_t comma = find0(w, d, e, ",");
        size_t init = find0(w, d, comma, "=");
        size_t brace = find0(w, d, init, "{");
        size_t decl_end = brace < init ? brace : init;
        size_t name = declarator_name(w, d, decl_end);
        if (name == decl_end) {
            rw_error(w, d, "__gm__ declaration: cannot find the variable's name");
            acc_buf_free(&ins);
            return;
        }
        /* a function declaration (name followed by its parameters) is not a variable */
        if (tis(w, name + 1, "(") && !(name > d && tis(w, name - 1, "*"))) {
            acc_buf_free(&ins);
            return;
        }
        char *n = ttext(w, name);
        if (is_extern) {
            acc_buf_printf(&ins, " extern aclsimVar aclsim__var_%s;", n);
        } else {
            acc_buf_printf(&ins,
                           " %saclsimVar aclsim__var_%s = ::aclsim_asc::make_var(&%s, sizeof(%s), "
                           "alignof(decltype(%s)), \"%s\", __FILE__, %d);"
                           " static ::aclsim_asc::var_registrar aclsim__varreg_%s(&aclsim__var_%s);"
                           " static_assert(::aclsim_asc::var_ok<decltype(%s)>::value, "
                           "\"%s:%d: __gm__ variable %s: its type cannot be a device variable "
                           "(a device variable is copied as bytes: it must be trivially "
                           "copyable, not a reference or a class with constructors)\");",
                           is_static ? "static " : "", n, n, n, n, n, w->t[name].line, n, n, n,
                           w->display, w->t[name].line, n);
        }
        if (w->nvars % 16 == 0)
            w->vars = xrealloc(w->vars, (w->nvars + 16) * sizeof *w->vars);
        w->vars[w->nvars++] = (struct gmvar){n, ns_path(ns, nsdepth)};
        nnames++;
        d = comma + 1;
    }
    acc_buf_puts(&ins, " }");
    if (nnames)
        add_repl(w, w->t[e].e, w->t[e].e, ins.data);
    else
        acc_buf_free(&ins);
}

/* Parameters of a kernel: (b, e) are the parentheses' indices. */
static void kernel_params(struct rw *w, struct acc_kernel *k, size_t b, size_t e)
{
    if (e == b + 1 || (e == b + 2 && tis(w, b + 1, "void")))
        return;
    size_t p = b + 1;
    while (p < e) {
        size_t comma = find0(w, p, e, ",");
        size_t def = find0(w, p, comma, "=");
        size_t name = def;
        if (def - p >= 2 && w->t[def - 1].kind == T_ID && !is_type_word(w, def - 1))
            name = def - 1;
        bool gm = contains(w, p, def, "__gm__") || contains(w, p, def, "GM_ADDR");
        k->param_type = xrealloc(k->param_type, (k->nparams + 1) * sizeof(char *));
        k->param_name = xrealloc(k->param_name, (k->nparams + 1) * sizeof(char *));
        k->param_gm = xrealloc(k->param_gm, (k->nparams + 1) * sizeof(bool));
        if (gm) {
            k->param_type[k->nparams] = xstrndup("void*", 5);
        } else {
            struct acc_buf t = {0};
            for (size_t i = p; i < name; i++) {
                if (tis(w, i, "__gm__"))
                    continue;
                char *one = join(w, i, i + 1);
                if (t.len && (w->t[i].kind != T_PUNCT || tis(w, i, "*")))
                    acc_buf_puts(&t, " ");
                acc_buf_puts(&t, one);
                free(one);
            }
            if (!t.data)
                acc_buf_puts(&t, "int");
            k->param_type[k->nparams] = t.data;
        }
        if (name < def) {
            k->param_name[k->nparams] = ttext(w, name);
        } else {
            char nm[32];
            snprintf(nm, sizeof nm, "arg%u", k->nparams);
            k->param_name[k->nparams] = xstrndup(nm, strlen(nm));
        }
        k->param_gm[k->nparams] = gm;
        k->nparams++;
        p = comma + 1;
    }
}

/* A function definition [b, body) whose body opens at body (a '{'). */
/* The '(' of a function head [b, body): the first '(' at depth 0 after an
 * identifier that is not an attribute, outside a template header; b if none. */
static size_t params_open(const struct rw *w, size_t b, size_t body)
{
    for (size_t i = b; i < body; i++) {
        if (tis(w, i, "<") && i > b && tis(w, i - 1, "template")) {   /* template header */
            int angle = 0;
            for (; i < body; i++) {
                if (tis(w, i, "<"))
                    angle++;
                else if (tis(w, i, ">") && --angle == 0)
                    break;
            }
            continue;
        }
        if (tis(w, i, "(")) {
            if (i > b && w->t[i - 1].kind == T_ID && !tis(w, i - 1, "__attribute__") &&
                !tis(w, i - 1, "alignas") && !tis(w, i - 1, "__declspec"))
                return i;
            i = match_close(w, i);
        }
    }
    return b;
}

static void function_definition(struct rw *w, size_t b, size_t body, char **ns, size_t nsdepth)
{
    bool kernel = contains(w, b, body, "__global__");
    bool code = kernel || contains(w, b, body, "__aicore__");
    size_t end = match_close(w, body);
    size_t open = params_open(w, b, body);
    if (code) {
        /* from the parameters on: a parameter may hide a __gm__ variable */
        if (w->nbodies % 16 == 0)
            w->bodies = xrealloc(w->bodies, (w->nbodies + 16) * sizeof *w->bodies);
        w->bodies[w->nbodies++] = (struct range){open == b ? body : open, end};
    }
    if (!kernel)
        return;
    if (open == b) {
        rw_error(w, b, "__global__ function: cannot find its name");
        return;
    }
    size_t close = match_close(w, open);
    struct acc_kernel k = {0};
    k.name = ttext(w, open - 1);
    char *path = ns_path(ns, nsdepth);
    struct acc_buf q = {0};
    acc_buf_puts(&q, path);
    acc_buf_puts(&q, k.name);
    free(path);
    k.qname = q.data;
    k.line = w->t[open - 1].line;
    k.is_template = tis(w, b, "template");
    kernel_params(w, &k, open, close);
    if (k.is_template) {
        /* registered when launched (<<<>>>): each instantiation is its own kernel */
    } else {
        struct acc_buf r = {0};
        acc_buf_printf(&r,
                       " static_assert(::aclsim_asc::kernel_traits<decltype(&%s)>::count <= 16, "
                       "\"%s:%d: __global__ function %s has more than 16 parameters: aclsim "
                       "kernels take at most 16\");"
                       " static_assert(::aclsim_asc::kernel_traits<decltype(&%s)>::params_ok, "
                       "\"%s:%d: __global__ function %s: a parameter has a type that cannot be "
                       "a kernel parameter (arguments are copied as bytes: use pointers, "
                       "scalars and trivially copyable structs, not references)\");"
                       " static const ::aclsim_asc::fn<decltype(&%s)>::registrar<&%s> "
                       "aclsim__kreg_%s_%d(\"%s\", __FILE__, %d);",
                       k.name, w->display, k.line, k.name, k.name, w->display, k.line, k.name,
                       k.name, k.name, k.name, k.line, k.name, k.line);
        if (k.nparams > 16)
            rw_error(w, open - 1, "__global__ function %s has %u parameters: at most 16", k.name,
                     k.nparams);
        add_repl(w, w->t[end].e, w->t[end].e, r.data);
        if (w->launch_funcs) {
            acc_buf_printf(&w->tail, "#line %d ", k.line);
            add_cstring(&w->tail, w->display);
            acc_buf_printf(&w->tail, "\nextern \"C\" uint32_t aclrtlaunch_%s(uint32_t blockDim, "
                                     "aclrtStream stream", k.name);
            for (unsigned i = 0; i < k.nparams; i++)
                acc_buf_printf(&w->tail, ", %s %s", k.param_type[i], k.param_name[i]);
            acc_buf_printf(&w->tail, ")\n{\n    return (uint32_t)::aclsim_asc::fn<decltype(&%s)>::"
                                     "launcher<&%s>(\"%s\", __FILE__, __LINE__, blockDim, "
                                     "nullptr, stream)(",
                           k.qname, k.qname, k.name);
            for (unsigned i = 0; i < k.nparams; i++)
                acc_buf_printf(&w->tail, "%s%s", i ? ", " : "", k.param_name[i]);
            acc_buf_puts(&w->tail, ");\n}\n");
        }
    }
    struct acc_result *res = w->res;
    res->kernels = xrealloc(res->kernels, (res->nkernels + 1) * sizeof *res->kernels);
    res->kernels[res->nkernels++] = k;
}

enum scope_kind { S_NS, S_CLASS };

/* Parses declarations in [i, end) at namespace (or class) level. */
static size_t parse_scope(struct rw *w, size_t i, size_t end, int kind, char **ns, size_t nsdepth)
{
    size_t stmt = i;
    while (i < end) {
        if (w->t[i].directive) {
            if (stmt == i)
                stmt++;
            i++;
            continue;
        }
        if (tis(w, i, "}"))
            return i;
        if (tis(w, i, ";")) {
            if (kind == S_NS && contains(w, stmt, i, "__gm__") &&
                find0(w, stmt, i, "__gm__") < i)
                gm_declaration(w, stmt, i, ns, nsdepth);
            stmt = ++i;
            continue;
        }
        if (tis(w, i, ":") && i == stmt + 1 &&
            (tis(w, stmt, "public") || tis(w, stmt, "private") || tis(w, stmt, "protected"))) {
            stmt = ++i;
            continue;
        }
        if (tis(w, i, "(") || tis(w, i, "[")) {
            i = match_close(w, i) + 1;
            continue;
        }
        if (!tis(w, i, "{")) {
            i++;
            continue;
        }
        /* a '{': what opens here? */
        size_t close;
        if (contains(w, stmt, i, "namespace") ||
            (i == stmt + 2 && tis(w, stmt, "extern") && w->t[stmt + 1].kind == T_STR)) {
            char *name = NULL;
            if (tis(w, stmt, "namespace") || tis(w, stmt, "inline")) {
                if (w->t[i - 1].kind == T_ID && !tis(w, i - 1, "namespace"))
                    name = join(w, find0(w, stmt, i, "namespace") + 1, i);
                else
                    name = xstrndup(ANON_NS, strlen(ANON_NS));   /* unnamed namespace */
            }
            char **inner = xrealloc(NULL, (nsdepth + 1) * sizeof *inner);
            if (nsdepth)
                memcpy(inner, ns, nsdepth * sizeof *ns);
            inner[nsdepth] = name;
            close = parse_scope(w, i + 1, end, S_NS, inner, nsdepth + 1);
            free(name);
            free(inner);
            stmt = i = close + 1;
            continue;
        }
        size_t eq = find0(w, stmt, i, "=");
        size_t paren = find0(w, stmt, i, "(");
        bool has_class = false;
        for (size_t j = stmt; j < i; j++)
            if (tis(w, j, "class") || tis(w, j, "struct") || tis(w, j, "union"))
                has_class = true;
        if (eq < i || tis(w, stmt, "enum") || (stmt < i && tis(w, stmt + 1, "enum"))) {
            i = match_close(w, i) + 1;   /* initializer or enum body: part of the statement */
            continue;
        }
        if (paren < i && !(has_class && paren > i)) {
            /* function definition, or a constructor's member initializers */
            size_t pclose = match_close(w, paren);
            size_t colon = find0(w, pclose, i, ":");
            if (colon < i && i > 0 && (w->t[i - 1].kind == T_ID || tis(w, i - 1, ">"))) {
                i = match_close(w, i) + 1;   /* member initializer b{2} */
                continue;
            }
            if (w->t[paren - 1].kind == T_ID || tis(w, paren - 1, ">") ||
                tis(w, paren - 1, "operator") || colon < i) {
                function_definition(w, stmt, i, ns, nsdepth);
                close = match_close(w, i);
                stmt = i = close + 1;
                continue;
            }
        }
        if (has_class) {
            close = parse_scope(w, i + 1, end, S_CLASS, ns, nsdepth);
            i = close + 1;   /* the statement goes on: "} s;" */
            continue;
        }
        i = match_close(w, i) + 1;   /* brace initializer: T x{1}; */
    }
    return i;
}

/* asm("trap") (or __asm__ volatile("trap;")) at i: the index of its ')', or 0. */
static size_t asm_trap(const struct rw *w, size_t i)
{
    if (!tis(w, i, "asm") && !tis(w, i, "__asm__") && !tis(w, i, "__asm"))
        return 0;
    size_t j = i + 1;
    if (tis(w, j, "volatile") || tis(w, j, "__volatile__"))
        j++;
    if (!tis(w, j, "(") || j + 2 >= w->nt || w->t[j + 1].kind != T_STR || !tis(w, j + 2, ")"))
        return 0;
    const char *p = w->L.s + w->t[j + 1].b, *e = w->L.s + w->t[j + 1].e;
    if (*p != '"')
        return 0;
    p++;
    e--;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == ';'))
        e--;
    return e - p == 4 && !memcmp(p, "trap", 4) ? j + 2 : 0;
}

static bool is_keyword_before_expr(const struct rw *w, size_t i)
{
    static const char *const kw[] = {"return", "case", "goto", "sizeof", "else", "do", "throw",
                                     "new", "delete", "typeid", "decltype", "alignof",
                                     "co_return", "co_yield", "co_await", "operator", "struct",
                                     "class", "union", "enum", "using", "namespace", NULL};
    for (int k = 0; kw[k]; k++)
        if (tis(w, i, kw[k]))
            return true;
    return false;
}

static bool is_type_end(const struct rw *w, size_t i)
{
    return is_type_word(w, i) || (w->t[i].kind == T_ID && !is_keyword_before_expr(w, i));
}

/* Whether the name at i is declared there (a parameter or a local of kernel
 * code: "T name =", "T *name;", "for (T name :", ...). open is the innermost
 * open bracket around i (or SIZE_MAX), first the range's start. */
static bool declares(const struct rw *w, size_t i, size_t open, size_t first)
{
    static const char *const after[] = {"=", ";", ",", "[", "{", ")", "(", ":", NULL};
    bool ok = false;
    for (int k = 0; after[k]; k++)
        ok = ok || tis(w, i + 1, after[k]);
    if (!ok || i <= first)
        return false;
    size_t p = i - 1;
    bool ptr = false;
    while (p > first && (tis(w, p, "*") || tis(w, p, "&") || tis(w, p, "const") ||
                         tis(w, p, "volatile") || tis(w, p, "__restrict__"))) {
        ptr = ptr || tis(w, p, "*") || tis(w, p, "&");
        p--;
    }
    if (!is_type_end(w, p))
        return false;
    if (!ptr)
        return true;   /* two names in a row: only a declaration has that */
    /* "a * name" is a declaration only where a statement or parameter starts */
    while (p > first && (is_type_end(w, p - 1) || tis(w, p - 1, "::") ||
                         (tis(w, p, "::") && w->t[p - 1].kind == T_ID)))
        p--;
    size_t q = p - 1;
    if (tis(w, q, "{") || tis(w, q, "}") || tis(w, q, ";"))
        return true;
    if (tis(w, q, "(") || tis(w, q, ","))
        return open != SIZE_MAX && (open == first || (open > 0 && tis(w, open - 1, "for")));
    return false;
}

/* Inside kernel code, each use of a __gm__ variable becomes its instance
 * (unless a parameter or local of that name hides it), and the NPU's
 * asm("trap") becomes trap(). */
static void rewrite_gm_uses(struct rw *w)
{
    size_t *stack = NULL, cap = 0;
    struct shadow { size_t var, until; } *hid = NULL;
    size_t nhid = 0, hcap = 0;
    for (size_t r = 0; r < w->nbodies; r++) {
        size_t first = w->bodies[r].b, last = w->bodies[r].e;
        size_t depth = 0;
        nhid = 0;
        for (size_t i = first; i <= last && i < w->nt; i++) {
            if (w->t[i].directive)
                continue;
            if (is_open(w, i)) {
                if (depth == cap) {
                    cap = cap ? 2 * cap : 32;
                    stack = xrealloc(stack, cap * sizeof *stack);
                }
                stack[depth++] = i;
                continue;
            }
            if (is_close(w, i)) {
                if (depth)
                    depth--;
                continue;
            }
            if (w->t[i].kind != T_ID)
                continue;
            size_t trap_end = asm_trap(w, i);
            if (trap_end) {
                add_repl(w, w->t[i].b, w->t[trap_end].e, xstrndup("trap()", 6));
                i = trap_end;
                continue;
            }
            size_t v;
            for (v = 0; v < w->nvars; v++)
                if (tis(w, i, w->vars[v].name))
                    break;
            if (v == w->nvars)
                continue;
            if (i > 0 && (tis(w, i - 1, ".") || tis(w, i - 1, "->")))
                continue;
            if (tis(w, i + 1, "::"))
                continue;
            bool hidden = false;
            for (size_t h = 0; h < nhid; h++)
                hidden = hidden || (hid[h].var == v && i <= hid[h].until);
            size_t open = depth ? stack[depth - 1] : SIZE_MAX;
            if (!hidden && !(i > 0 && tis(w, i - 1, "::")) && declares(w, i, open, first)) {
                /* hidden until its scope ends: the whole function for a
                 * parameter, the for statement for a for-init, else the block */
                size_t until = last;
                if (open != SIZE_MAX && open != first && tis(w, open, "(")) {
                    size_t c = match_close(w, open);
                    until = tis(w, c + 1, "{") ? match_close(w, c + 1) : find0(w, c + 1, last, ";");
                } else if (open != SIZE_MAX && tis(w, open, "{")) {
                    until = match_close(w, open);
                }
                if (nhid == hcap) {
                    hcap = hcap ? 2 * hcap : 16;
                    hid = xrealloc(hid, hcap * sizeof *hid);
                }
                hid[nhid++] = (struct shadow){v, until};
                hidden = true;
            }
            if (hidden)
                continue;
            size_t s = i;
            while (s >= 2 && tis(w, s - 1, "::") && w->t[s - 2].kind == T_ID)
                s -= 2;
            if (s >= 1 && tis(w, s - 1, "::"))
                s--;
            char *full = join(w, s, i + 1);
            char *qual = join(w, s, i);
            struct acc_buf out = {0};
            acc_buf_printf(&out, "ACLSIM_ASC_DEV(%s, %saclsim__var_%s)", full, qual,
                           w->vars[v].name);
            free(full);
            free(qual);
            add_repl(w, w->t[s].b, w->t[i].e, out.data);
        }
    }
    free(stack);
    free(hid);
}

/* Writes src with the replacements applied; a replaced span's newlines are kept. */
static void apply(struct rw *w, struct acc_buf *out)
{
    if (w->nr)
        qsort(w->r, w->nr, sizeof *w->r, repl_cmp);
    size_t pos = 0;
    for (size_t k = 0; k < w->nr; k++) {
        struct repl *r = &w->r[k];
        if (r->b < pos) {   /* overlapping (should not happen): keep the first */
            free(r->text);
            continue;
        }
        acc_buf_add(out, w->L.s + pos, r->b - pos);
        acc_buf_puts(out, r->text);
        for (size_t i = r->b; i < r->e; i++)
            if (w->L.s[i] == '\n')
                acc_buf_puts(out, i > 0 && w->L.s[i - 1] == '\\' ? "\\\n" : "\n");
        pos = r->e;
        free(r->text);
    }
    acc_buf_add(out, w->L.s + pos, w->L.n - pos);
}

bool acc_rewrite(const char *src, size_t len, const char *display, bool launch_funcs,
                 struct acc_result *res)
{
    memset(res, 0, sizeof *res);
    struct rw w = {0};
    w.L = (struct lexer){.s = src, .n = len, .line = 1, .errors = &res->errors,
                         .display = display, .ok = true};
    w.display = display;
    w.res = res;
    w.launch_funcs = launch_funcs;
    bool ok = tokenize(&w.L);
    w.t = w.L.t;
    w.nt = w.L.nt;
    if (ok) {
        parse_scope(&w, 0, w.nt, S_NS, NULL, 0);
        rewrite_gm_uses(&w);
        rewrite_launches(&w);
    }
    acc_buf_puts(&res->out, "#include \"aclsim_ascendc.h\"\n#line 1 ");
    add_cstring(&res->out, display);
    acc_buf_puts(&res->out, "\n");
    apply(&w, &res->out);
    if (w.tail.len) {
        acc_buf_puts(&res->out, "\n");
        acc_buf_add(&res->out, w.tail.data, w.tail.len);
    }
    acc_buf_free(&w.tail);
    free(w.r);
    for (size_t i = 0; i < w.nvars; i++) {
        free(w.vars[i].name);
        free(w.vars[i].ns);
    }
    free(w.vars);
    free(w.bodies);
    free(w.L.t);
    return res->errors.len == 0;
}

void acc_result_free(struct acc_result *res)
{
    acc_buf_free(&res->out);
    acc_buf_free(&res->errors);
    for (size_t i = 0; i < res->nkernels; i++) {
        struct acc_kernel *k = &res->kernels[i];
        for (unsigned p = 0; p < k->nparams; p++) {
            free(k->param_type[p]);
            free(k->param_name[p]);
        }
        free(k->param_type);
        free(k->param_name);
        free(k->param_gm);
        free(k->name);
        free(k->qname);
    }
    free(res->kernels);
    memset(res, 0, sizeof *res);
}

void acc_launch_header(const struct acc_kernel *k, struct acc_buf *out)
{
    struct acc_buf guard = {0};
    for (const char *p = k->name; *p; p++) {
        char c = (char)toupper((unsigned char)*p);
        acc_buf_add(&guard, &c, 1);
    }
    acc_buf_printf(out,
                   "#ifndef HEADER_ACLRTLAUNCH_%s_H\n#define HEADER_ACLRTLAUNCH_%s_H\n"
                   "#include \"acl/acl_base.h\"\n\n"
                   "#ifndef ACLRT_LAUNCH_KERNEL\n"
                   "#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func\n"
                   "#endif\n\n"
                   "extern \"C\" uint32_t aclrtlaunch_%s(uint32_t blockDim, aclrtStream stream",
                   guard.data, guard.data, k->name);
    for (unsigned i = 0; i < k->nparams; i++)
        acc_buf_printf(out, ", %s %s", k->param_type[i], k->param_name[i]);
    acc_buf_puts(out, ");\n#endif\n");
    acc_buf_free(&guard);
}
