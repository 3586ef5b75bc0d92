/*
 * auger._textscan: a delimited-text tokenizer that keeps only the fields a query needs.
 *
 * pyarrow's CSV reader splits and converts every field of every line; a query that wants
 * 2 fields of 20 still pays for all 20. Drill's own text reader stores only the projected
 * fields and skips the rest of a line once the last one is read. This module does the same
 * for the common options (one-byte delimiter, the quote escaping itself, lines ending in
 * \n or \r\n, an optional comment character), and reports anything else (a quote inside
 * an unquoted field, text after a closing quote, a lone \r, a quote left open, an oversized
 * field, too many fields) as a status instead of guessing: the caller then hands the rest of
 * the file to the Python parser, which follows Drill's rules for messy input and says where.
 *
 * scan() parses whole records from a buffer and returns their fields as Arrow string
 * buffers (int32 offsets + UTF-8 bytes, not yet validated), in one of two shapes:
 *   columnar:  one string column per kept field position; short rows give "";
 *   row-major: one list<string> column, each row's fields up to `limit` (all when < 0),
 *              fields not kept giving "".
 * A record cut by the end of the buffer is left for the next call (unless `final`).
 * The GIL is released while parsing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *p;
    Py_ssize_t len, cap;
} Buf;

static int buf_need(Buf *b, Py_ssize_t extra) {
    if (b->len + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 1 << 14;
    while (cap < b->len + extra) cap *= 2;
    char *p = (char *)realloc(b->p, (size_t)cap);
    if (p == NULL) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const char *src, Py_ssize_t n) {
    if (n <= 0) return 0;
    if (buf_need(b, n) < 0) return -1;
    memcpy(b->p + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static inline int buf_i32(Buf *b, int32_t v) {
    if (buf_need(b, 4) < 0) return -1;
    memcpy(b->p + b->len, &v, 4);
    b->len += 4;
    return 0;
}

/* status codes: 0 ok; the others name why the caller must fall back */
enum {
    ST_OK = 0,
    ST_MESSY_QUOTE,
    ST_LONE_CR,
    ST_OPEN_QUOTE,
    ST_FIELD_TOO_BIG,
    ST_TOO_MANY_FIELDS,
    ST_TOO_BIG,
    ST_NOMEM,
};

static const char *status_text[] = {
    "",
    "quote Drill reads otherwise",
    "lone carriage return",
    "quote left open at end of input",
    "field too long",
    "too many fields",
    "output over 2 GB",
    "out of memory",
};

/* what a record parse ended with */
enum { REC_DONE = 0, REC_INCOMPLETE = 1, REC_FAIL = 2 };

typedef struct {
    /* input */
    const char *s;
    Py_ssize_t n;
    int final;
    int delim, quote, comment;
    unsigned char special[256];
    /* projection */
    int row_major;
    Py_ssize_t limit;       /* row-major: fields kept per row (<0: all) */
    const int32_t *colmap;  /* field position -> output column (columnar) or 1/0 (row-major) */
    Py_ssize_t nmap;        /* positions covered by colmap; beyond: not kept */
    Py_ssize_t last_kept;   /* highest kept position (columnar), -1: none */
    Py_ssize_t ncols;       /* output columns (columnar) */
    Py_ssize_t max_field, max_fields;
    /* output */
    Buf *off, *dat;         /* columnar: ncols each; row-major: off[0]=string offsets */
    Buf loff;               /* row-major list offsets */
    Buf counts;             /* columnar: fields seen per row (past the last kept: at least) */
    int status;
} Scan;

static inline int kept(const Scan *sc, Py_ssize_t fi) {
    if (sc->row_major) {
        if (sc->limit >= 0 && fi >= sc->limit) return -1;
        if (sc->colmap == NULL) return 0;
        return (fi < sc->nmap && sc->colmap[fi] >= 0) ? 0 : -2; /* -2: "" placeholder */
    }
    return (fi < sc->nmap) ? sc->colmap[fi] : -1;
}

/* end one stored field: its offset entry */
static inline int end_field(Scan *sc, int col) {
    Buf *d = &sc->dat[col];
    if (d->len > INT32_MAX) {
        sc->status = ST_TOO_BIG;
        return -1;
    }
    if (buf_i32(&sc->off[col], (int32_t)d->len) < 0) {
        sc->status = ST_NOMEM;
        return -1;
    }
    return 0;
}

/* Skip the rest of a record from pos (a field start) without storing anything, jumping from
 * quote to quote and line end to line end with memchr rather than looking at every byte.
 * Sets *next to the position after the record. Returns 1 done, 0 when something needs the
 * full parse (a quote not at a field start, text after a closing quote, a lone \r, a line
 * long enough to hold too many fields), -1 when the record is cut by the end of the buffer. */
static int skip_rest(const Scan *sc, Py_ssize_t pos, Py_ssize_t *next) {
    const char *s = sc->s;
    const Py_ssize_t n = sc->n, start = pos;
    const int quote = sc->quote, delim = sc->delim;
    Py_ssize_t end = -1; /* the line end at or after pos, once found */
    for (;;) {
        if (end < pos) {
            const char *nl = (const char *)memchr(s + pos, '\n', (size_t)(n - pos));
            if (nl == NULL && !sc->final) return -1;
            end = nl ? (Py_ssize_t)(nl - s) : n;
            if (end - start >= sc->max_fields) return 0;
            /* a \r anywhere but right before the \n: the full parse judges it */
            Py_ssize_t cr_end = (nl && end > pos && s[end - 1] == '\r') ? end - 1 : end;
            if (memchr(s + pos, '\r', (size_t)(cr_end - pos)) != NULL) return 0;
        }
        const char *q =
            quote >= 0 ? (const char *)memchr(s + pos, quote, (size_t)(end - pos)) : NULL;
        if (q == NULL) {
            *next = end < n ? end + 1 : n;
            return 1;
        }
        Py_ssize_t qp = (Py_ssize_t)(q - s);
        if (qp != start && (unsigned char)s[qp - 1] != delim) return 0; /* not a field start */
        /* the closing quote, past doubled ones; line ends inside are data */
        Py_ssize_t p = qp + 1;
        for (;;) {
            const char *c = (const char *)memchr(s + p, quote, (size_t)(n - p));
            if (c == NULL) return sc->final ? 0 : -1;
            p = (Py_ssize_t)(c - s) + 1;
            if (p >= n) {
                if (!sc->final) return -1;
                *next = n;
                return 1;
            }
            if ((unsigned char)s[p] == quote) {
                p++;
                continue;
            }
            break;
        }
        int after = (unsigned char)s[p];
        if (after == delim) {
            pos = p + 1;
            if (pos >= n && !sc->final) return -1;
            continue;
        }
        if (after == '\n') {
            *next = p + 1;
            return 1;
        }
        if (after == '\r') {
            if (p + 1 >= n) return sc->final ? 0 : -1;
            if (s[p + 1] != '\n') return 0;
            *next = p + 2;
            return 1;
        }
        return 0; /* text after a closing quote */
    }
}

/* After a field, at pos: the delimiter (another field follows: *more = 1) or the line end
 * (\n or \r\n: *more = 0) that ends it; anything else is refused. */
static int field_end(Scan *sc, Py_ssize_t *ppos, int *more) {
    const char *s = sc->s;
    Py_ssize_t pos = *ppos;
    int c = (unsigned char)s[pos];
    if (c == sc->delim) {
        *more = 1;
        *ppos = pos + 1;
        return REC_DONE;
    }
    *more = 0;
    if (c == '\n') {
        *ppos = pos + 1;
        return REC_DONE;
    }
    if (c == '\r') {
        if (pos + 1 >= sc->n) {
            if (!sc->final) return REC_INCOMPLETE;
            sc->status = ST_LONE_CR;
            return REC_FAIL;
        }
        if (s[pos + 1] != '\n') {
            sc->status = ST_LONE_CR;
            return REC_FAIL;
        }
        *ppos = pos + 2;
        return REC_DONE;
    }
    sc->status = ST_MESSY_QUOTE; /* text after a closing quote, or a quote inside a field */
    return REC_FAIL;
}

/* Parse one record starting at *ppos (not an empty or comment line). */
static int parse_record(Scan *sc, Py_ssize_t *ppos) {
    const char *s = sc->s;
    const Py_ssize_t n = sc->n;
    const int quote = sc->quote;
    Py_ssize_t pos = *ppos;
    Py_ssize_t fi = 0;
    int slow_rest = 0;
    for (;;) {
        if (fi >= sc->max_fields) {
            sc->status = ST_TOO_MANY_FIELDS;
            return REC_FAIL;
        }
        int col = kept(sc, fi);
        if (!slow_rest && col == -1 &&
            (sc->row_major ? (sc->limit >= 0 && fi >= sc->limit) : fi > sc->last_kept)) {
            Py_ssize_t next;
            int r = skip_rest(sc, pos, &next);
            if (r < 0) return REC_INCOMPLETE;
            if (r == 1) {
                *ppos = next;
                if (!sc->row_major && buf_i32(&sc->counts, (int32_t)fi) < 0) goto nomem;
                return REC_DONE;
            }
            slow_rest = 1; /* something in the rest needs the full parse */
        }
        Buf *d = NULL;
        if (col >= 0) d = sc->row_major ? &sc->dat[0] : &sc->dat[col];
        int more; /* a delimiter ended the field: another follows */
        Py_ssize_t flen = 0;
        if (quote >= 0 && pos < n && (unsigned char)s[pos] == quote) {
            pos++;
            for (;;) {
                const char *q = (const char *)memchr(s + pos, quote, (size_t)(n - pos));
                if (q == NULL) {
                    if (!sc->final) return REC_INCOMPLETE;
                    sc->status = ST_OPEN_QUOTE;
                    return REC_FAIL;
                }
                Py_ssize_t qp = (Py_ssize_t)(q - s);
                flen += qp - pos;
                if (d && buf_put(d, s + pos, qp - pos) < 0) goto nomem;
                if (qp + 1 >= n) {
                    if (!sc->final) return REC_INCOMPLETE;
                    pos = n;
                    more = 0;
                    break;
                }
                int c = (unsigned char)s[qp + 1];
                if (c == quote) { /* a doubled quote: one quote of data */
                    flen++;
                    if (d && buf_put(d, s + qp, 1) < 0) goto nomem;
                    pos = qp + 2;
                    continue;
                }
                pos = qp + 1;
                int r = field_end(sc, &pos, &more);
                if (r != REC_DONE) return r;
                break;
            }
        } else {
            Py_ssize_t start = pos;
            const unsigned char *sp = sc->special;
            while (pos < n && !sp[(unsigned char)s[pos]]) pos++;
            flen = pos - start;
            if (pos >= n) {
                if (!sc->final) return REC_INCOMPLETE;
                more = 0;
            } else {
                int r = field_end(sc, &pos, &more);
                if (r != REC_DONE) return r;
            }
            if (d && buf_put(d, s + start, flen) < 0) goto nomem;
        }
        if (flen > sc->max_field && col >= 0) {
            sc->status = ST_FIELD_TOO_BIG;
            return REC_FAIL;
        }
        if (col != -1) {
            if (end_field(sc, sc->row_major ? 0 : col) < 0) return REC_FAIL;
        }
        fi++;
        if (!more) break;
    }
    if (!sc->row_major) { /* short row: "" for the kept positions it lacks */
        for (Py_ssize_t k = fi; k < sc->nmap && k <= sc->last_kept; k++) {
            int col = sc->colmap[k];
            if (col >= 0 && end_field(sc, col) < 0) return REC_FAIL;
        }
        if (buf_i32(&sc->counts, (int32_t)(fi < INT32_MAX ? fi : INT32_MAX)) < 0) goto nomem;
    }
    *ppos = pos;
    return REC_DONE;
nomem:
    sc->status = ST_NOMEM;
    return REC_FAIL;
}

typedef struct {
    Py_ssize_t off, dat;
} Mark;

static PyObject *bytes_of(Buf *b) {
    return PyBytes_FromStringAndSize(b->p ? b->p : "", b->len);
}

static PyObject *textscan_scan(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"data",  "final",     "delimiter",  "quote",      "comment",
                             "keep",  "row_major", "limit",      "skip",       "skip_line",
                             "max_field", "max_fields", NULL};
    Py_buffer data, keep;
    int final, delim, quote, comment, row_major, skip_line;
    Py_ssize_t limit, skip, max_field, max_fields;
    keep.buf = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*piiiz*pnnpnn", kwlist, &data, &final,
                                     &delim, &quote, &comment, &keep, &row_major, &limit, &skip,
                                     &skip_line, &max_field, &max_fields))
        return NULL;
    /* keep: int32 per field position (output column, or -1), or None for all */
    Scan sc;
    memset(&sc, 0, sizeof sc);
    sc.s = (const char *)data.buf;
    sc.n = data.len;
    sc.final = final;
    sc.delim = delim;
    sc.quote = quote;
    sc.comment = comment;
    sc.row_major = row_major;
    sc.limit = limit;
    sc.max_field = max_field;
    sc.max_fields = max_fields;
    sc.last_kept = -1;
    if (keep.buf != NULL) {
        sc.colmap = (const int32_t *)keep.buf;
        sc.nmap = keep.len / 4;
        for (Py_ssize_t i = 0; i < sc.nmap; i++) {
            if (sc.colmap[i] >= 0) {
                sc.last_kept = i;
                if (sc.colmap[i] + 1 > sc.ncols) sc.ncols = sc.colmap[i] + 1;
            }
        }
    } else if (!row_major) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError, "columnar scans need the kept positions");
        return NULL;
    }
    Py_ssize_t nbuf = row_major ? 1 : sc.ncols;
    sc.off = (Buf *)calloc((size_t)(nbuf ? nbuf : 1), sizeof(Buf));
    sc.dat = (Buf *)calloc((size_t)(nbuf ? nbuf : 1), sizeof(Buf));
    Mark *marks = (Mark *)calloc((size_t)(nbuf ? nbuf : 1), sizeof(Mark));
    PyObject *result = NULL;
    if (sc.off == NULL || sc.dat == NULL || marks == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memset(sc.special, 0, sizeof sc.special);
    sc.special[(unsigned char)delim] = 1;
    sc.special['\n'] = 1;
    sc.special['\r'] = 1;
    if (quote >= 0) sc.special[(unsigned char)quote] = 1;

    Py_ssize_t rows = 0, consumed = 0, lists = 0;
    int alloc_failed = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t b = 0; b < nbuf; b++) {
        if (buf_i32(&sc.off[b], 0) < 0) alloc_failed = 1;
    }
    if (row_major && buf_i32(&sc.loff, 0) < 0) alloc_failed = 1;
    if (alloc_failed) sc.status = ST_NOMEM;
    const char *s = sc.s;
    Py_ssize_t pos = 0;
    if (skip_line) { /* Drill's skipFirstLine: the first line as bytes, quotes or not */
        const char *nl = (const char *)memchr(s, '\n', (size_t)sc.n);
        if (nl != NULL)
            consumed = pos = (Py_ssize_t)(nl - s) + 1;
        else if (sc.final)
            consumed = pos = sc.n;
        else
            pos = sc.n; /* the line goes on in the next block */
    }
    while (!sc.status && pos < sc.n) {
        char c = s[pos];
        if (c == '\n') { /* an empty line */
            consumed = ++pos;
            continue;
        }
        if (c == '\r') {
            if (pos + 1 >= sc.n) {
                if (!sc.final) break;
                sc.status = ST_LONE_CR;
                break;
            }
            if (s[pos + 1] != '\n') {
                sc.status = ST_LONE_CR;
                break;
            }
            consumed = pos += 2;
            continue;
        }
        if (comment >= 0 && (unsigned char)c == comment) {
            const char *nl = (const char *)memchr(s + pos, '\n', (size_t)(sc.n - pos));
            if (nl == NULL) {
                if (!sc.final) break;
                consumed = pos = sc.n;
                break;
            }
            consumed = pos = (Py_ssize_t)(nl - s) + 1;
            continue;
        }
        for (Py_ssize_t k = 0; k < nbuf; k++) {
            marks[k].off = sc.off[k].len;
            marks[k].dat = sc.dat[k].len;
        }
        Py_ssize_t counts_mark = sc.counts.len;
        Py_ssize_t next = pos;
        int r = parse_record(&sc, &next);
        int skipped = r == REC_DONE && skip > 0; /* a leading record to drop */
        if (r != REC_DONE || skipped) {          /* take back what it wrote */
            for (Py_ssize_t k = 0; k < nbuf; k++) {
                sc.off[k].len = marks[k].off;
                sc.dat[k].len = marks[k].dat;
            }
            sc.counts.len = counts_mark;
            if (!skipped) break;
            skip--;
        } else {
            rows++;
            if (row_major) {
                lists = sc.off[0].len / 4 - 1;
                if (lists > INT32_MAX || buf_i32(&sc.loff, (int32_t)lists) < 0) {
                    sc.status = lists > INT32_MAX ? ST_TOO_BIG : ST_NOMEM;
                    rows--;
                    break;
                }
            }
        }
        consumed = pos = next;
    }
    Py_END_ALLOW_THREADS;

    if (sc.status == ST_NOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *payload = PyList_New(0);
    if (payload == NULL) goto done;
    if (row_major) {
        PyObject *t = Py_BuildValue("(NNN)", bytes_of(&sc.loff), bytes_of(&sc.off[0]),
                                    bytes_of(&sc.dat[0]));
        if (t == NULL || PyList_Append(payload, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(payload);
            goto done;
        }
        Py_DECREF(t);
    } else {
        for (Py_ssize_t k = 0; k < nbuf; k++) {
            PyObject *t = Py_BuildValue("(NN)", bytes_of(&sc.off[k]), bytes_of(&sc.dat[k]));
            if (t == NULL || PyList_Append(payload, t) < 0) {
                Py_XDECREF(t);
                Py_DECREF(payload);
                goto done;
            }
            Py_DECREF(t);
        }
    }
    result = Py_BuildValue("(snnnNN)", status_text[sc.status], consumed, rows, skip, payload,
                           bytes_of(&sc.counts));
done:
    if (sc.off) {
        for (Py_ssize_t k = 0; k < nbuf; k++) free(sc.off[k].p);
        free(sc.off);
    }
    if (sc.dat) {
        for (Py_ssize_t k = 0; k < nbuf; k++) free(sc.dat[k].p);
        free(sc.dat);
    }
    free(sc.loff.p);
    free(sc.counts.p);
    free(marks);
    PyBuffer_Release(&data);
    if (keep.buf != NULL) PyBuffer_Release(&keep);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))textscan_scan, METH_VARARGS | METH_KEYWORDS,
     "scan(data, final, delimiter, quote, comment, keep, row_major, limit, skip, skip_line, "
     "max_field, max_fields) -> (fallback_reason, consumed, rows, skip_left, buffers, counts)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_textscan",
    "Delimited-text tokenizer that keeps only the projected fields.", -1, methods,
};

PyMODINIT_FUNC PyInit__textscan(void) { return PyModule_Create(&module); }
