/*
 * auger._jsonscan: cut newline-delimited JSON objects down to the top-level keys a query needs.
 *
 * pyarrow's JSON reader parses and converts every member of every object, so a query that
 * needs 2 members of 20 costs nearly as much as one needing all 20. project() walks each
 * object once, copies the wanted members (key and raw value) into a much smaller document of
 * objects and skips the others without building anything; pyarrow then parses only that, with
 * all its type rules unchanged.
 *
 * Skipped values are still checked enough to notice broken input: strings must close on the
 * line, brackets must balance, and what lies outside strings must be JSON's number characters,
 * literals (true, false, null, NaN, Infinity) and punctuation. Anything the walk does not
 * accept (an escaped or differently-cased wanted key, an object spanning lines, a scalar or
 * array at top level, a malformed token) stops it with a reason: the caller hands the rest of
 * the file to the Python reader, which reads it as Drill would or reports where it breaks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *p;
    Py_ssize_t len, cap;
} Out;

static int out_put(Out *o, const char *src, Py_ssize_t n) {
    if (o->len + n > o->cap) {
        Py_ssize_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + n) cap *= 2;
        char *p = (char *)realloc(o->p, (size_t)cap);
        if (p == NULL) return -1;
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, src, (size_t)n);
    o->len += n;
    return 0;
}

enum { R_DONE = 0, R_INCOMPLETE = 1, R_FAIL = 2, R_NOMEM = 3 };

typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    int final;
    const char *reason;
    /* wanted keys */
    Py_ssize_t nkeys;
    const char **keys;
    Py_ssize_t *keylens;
} Walk;

static unsigned char token_char[256];  /* may appear in a scalar token */
static unsigned char string_stop[256];  /* ends a run of plain string bytes */

static inline int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* position after the string whose opening quote is at pos; -1 incomplete, -2 bad. A byte
 * loop: JSON strings are mostly short, where memchr's call costs more than it saves. */
static Py_ssize_t skip_string(const Walk *w, Py_ssize_t pos, int *escaped) {
    const unsigned char *s = w->s;
    const Py_ssize_t n = w->n;
    Py_ssize_t p = pos + 1;
    for (;;) {
        while (p < n && !string_stop[s[p]]) p++;
        if (p >= n) return w->final ? -2 : -1;
        unsigned char c = s[p];
        if (c == '"') return p + 1;
        if (c == '\\') {
            *escaped = 1;
            if (p + 1 >= n) return w->final ? -2 : -1;
            if (s[p + 1] == '\n') return -2;
            p += 2;
            continue;
        }
        return -2; /* a raw line break: the object spans lines */
    }
}

static int literal_ok(const unsigned char *t, Py_ssize_t len) {
    unsigned char c = t[0];
    if (c == '-' || c == '+' || (c >= '0' && c <= '9') || c == '.') {
        if (len == 9 && memcmp(t, "-Infinity", 9) == 0) return 1;
        for (Py_ssize_t i = 0; i < len; i++) {
            unsigned char d = t[i];
            if (!((d >= '0' && d <= '9') || d == '-' || d == '+' || d == '.' || d == 'e' ||
                  d == 'E'))
                return 0;
        }
        return 1;
    }
    return (len == 4 && (memcmp(t, "true", 4) == 0 || memcmp(t, "null", 4) == 0)) ||
           (len == 5 && memcmp(t, "false", 5) == 0) || (len == 3 && memcmp(t, "NaN", 3) == 0) ||
           (len == 8 && memcmp(t, "Infinity", 8) == 0);
}

/* position after the value starting at pos (not whitespace); -1 incomplete, -2 bad */
static Py_ssize_t skip_value(Walk *w, Py_ssize_t pos) {
    const unsigned char *s = w->s;
    const Py_ssize_t n = w->n;
    unsigned char c = s[pos];
    int esc = 0;
    if (c == '"') return skip_string(w, pos, &esc);
    if (c == '{' || c == '[') {
        int depth = 0;
        Py_ssize_t p = pos;
        while (p < n) {
            unsigned char d = s[p];
            if (d == '"') {
                Py_ssize_t e = skip_string(w, p, &esc);
                if (e < 0) return e;
                p = e;
                continue;
            }
            if (d == '{' || d == '[') {
                depth++;
            } else if (d == '}' || d == ']') {
                if (--depth == 0) return p + 1;
            } else if (d == '\n') {
                return -2; /* spans lines */
            } else if (!(is_ws(d) || d == ',' || d == ':' || token_char[d])) {
                return -2;
            } else if (token_char[d]) { /* a scalar inside: check the token */
                Py_ssize_t t = p;
                while (t < n && token_char[s[t]]) t++;
                if (t >= n && !w->final) return -1;
                if (!literal_ok(s + p, t - p)) return -2;
                p = t;
                continue;
            }
            p++;
        }
        return w->final ? -2 : -1;
    }
    if (!token_char[c]) return -2;
    Py_ssize_t t = pos;
    while (t < n && token_char[s[t]]) t++;
    if (t >= n && !w->final) return -1;
    if (!literal_ok(s + pos, t - pos)) return -2;
    return t;
}

/* which wanted key a member name is: index, -1 none, -2 the same but cased otherwise */
static int match_key(const Walk *w, const unsigned char *k, Py_ssize_t len) {
    for (Py_ssize_t i = 0; i < w->nkeys; i++) {
        if (w->keylens[i] != len) continue;
        const unsigned char *want = (const unsigned char *)w->keys[i];
        Py_ssize_t j = 0;
        while (j < len && k[j] == want[j]) j++;
        if (j == len) return (int)i;
        while (j < len && tolower(k[j]) == tolower(want[j])) j++;
        if (j == len) return -2;
    }
    return -1;
}

static Py_ssize_t skip_ws(const Walk *w, Py_ssize_t p) {
    while (p < w->n && is_ws(w->s[p])) p++;
    return p;
}

/* one object at pos ('{'); appends its wanted members to out; *next after it */
static int project_object(Walk *w, Py_ssize_t pos, Out *out, Py_ssize_t *next) {
    const unsigned char *s = w->s;
    const Py_ssize_t n = w->n;
    Py_ssize_t p = skip_ws(w, pos + 1);
    int members = 0;
    if (out_put(out, "{", 1) < 0) return R_NOMEM;
    if (p >= n) return w->final ? (w->reason = "truncated object", R_FAIL) : R_INCOMPLETE;
    if (s[p] == '}') {
        *next = p + 1;
        return out_put(out, "}\n", 2) < 0 ? R_NOMEM : R_DONE;
    }
    for (;;) {
        if (p >= n) return w->final ? (w->reason = "truncated object", R_FAIL) : R_INCOMPLETE;
        if (s[p] != '"') {
            w->reason = "member name expected";
            return R_FAIL;
        }
        int esc = 0;
        Py_ssize_t kend = skip_string(w, p, &esc);
        if (kend == -1) return R_INCOMPLETE;
        if (kend < 0) {
            w->reason = "bad member name";
            return R_FAIL;
        }
        if (esc) {
            w->reason = "escaped member name";
            return R_FAIL;
        }
        int which = match_key(w, s + p + 1, kend - p - 2);
        if (which == -2) {
            w->reason = "member name in another case";
            return R_FAIL;
        }
        Py_ssize_t q = skip_ws(w, kend);
        if (q >= n) return w->final ? (w->reason = "truncated object", R_FAIL) : R_INCOMPLETE;
        if (s[q] != ':') {
            w->reason = "colon expected";
            return R_FAIL;
        }
        q = skip_ws(w, q + 1);
        if (q >= n) return w->final ? (w->reason = "truncated object", R_FAIL) : R_INCOMPLETE;
        Py_ssize_t vend = skip_value(w, q);
        if (vend == -1) return R_INCOMPLETE;
        if (vend < 0) {
            w->reason = "malformed value";
            return R_FAIL;
        }
        if (which >= 0) {
            if ((members++ && out_put(out, ",", 1) < 0) ||
                out_put(out, (const char *)s + p, kend - p) < 0 || out_put(out, ":", 1) < 0 ||
                out_put(out, (const char *)s + q, vend - q) < 0)
                return R_NOMEM;
        }
        p = skip_ws(w, vend);
        if (p >= n) return w->final ? (w->reason = "truncated object", R_FAIL) : R_INCOMPLETE;
        if (s[p] == ',') {
            p = skip_ws(w, p + 1);
            continue;
        }
        if (s[p] == '}') {
            *next = p + 1;
            return out_put(out, "}\n", 2) < 0 ? R_NOMEM : R_DONE;
        }
        w->reason = "comma or closing brace expected";
        return R_FAIL;
    }
}

static PyObject *jsonscan_project(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"data", "final", "keys", NULL};
    Py_buffer data;
    int final;
    PyObject *keys;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*pO!", kwlist, &data, &final, &PyTuple_Type,
                                     &keys))
        return NULL;
    Walk w;
    memset(&w, 0, sizeof w);
    w.s = (const unsigned char *)data.buf;
    w.n = data.len;
    w.final = final;
    w.reason = "";
    w.nkeys = PyTuple_GET_SIZE(keys);
    w.keys = (const char **)calloc((size_t)(w.nkeys ? w.nkeys : 1), sizeof(char *));
    w.keylens = (Py_ssize_t *)calloc((size_t)(w.nkeys ? w.nkeys : 1), sizeof(Py_ssize_t));
    PyObject *result = NULL;
    if (w.keys == NULL || w.keylens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < w.nkeys; i++) {
        PyObject *k = PyTuple_GET_ITEM(keys, i);
        if (!PyBytes_Check(k)) {
            PyErr_SetString(PyExc_TypeError, "keys must be bytes");
            goto done;
        }
        w.keys[i] = PyBytes_AS_STRING(k);
        w.keylens[i] = PyBytes_GET_SIZE(k);
    }
    Out out = {NULL, 0, 0};
    Py_ssize_t consumed = 0, records = 0;
    int status = R_DONE;
    Py_BEGIN_ALLOW_THREADS;
    Py_ssize_t p = 0;
    while (p < w.n) {
        unsigned char c = w.s[p];
        if (is_ws(c) || c == '\n') {
            p++;
            consumed = p;
            continue;
        }
        if (c != '{') {
            w.reason = "not an object";
            status = R_FAIL;
            break;
        }
        Py_ssize_t mark = out.len, next = 0;
        int r = project_object(&w, p, &out, &next);
        if (r != R_DONE) {
            out.len = mark;
            status = r;
            break;
        }
        records++;
        p = consumed = next;
    }
    Py_END_ALLOW_THREADS;
    if (status == R_NOMEM) {
        free(out.p);
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(snny#)", status == R_FAIL ? w.reason : "", consumed, records,
                           out.p ? out.p : "", out.len);
    free(out.p);
done:
    free(w.keys);
    free(w.keylens);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"project", (PyCFunction)(void (*)(void))jsonscan_project, METH_VARARGS | METH_KEYWORDS,
     "project(data, final, keys) -> (fallback_reason, consumed, records, projected)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_jsonscan",
    "Cut newline-delimited JSON objects down to the wanted top-level members.", -1, methods,
};

PyMODINIT_FUNC PyInit__jsonscan(void) {
    const char *chars = "0123456789+-.eEtrufalsnNIiy";
    for (const char *c = chars; *c; c++) token_char[(unsigned char)*c] = 1;
    string_stop['"'] = string_stop['\\'] = string_stop['\n'] = 1;
    return PyModule_Create(&module);
}
