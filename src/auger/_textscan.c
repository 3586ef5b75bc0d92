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
    /* the fast path */
    uint64_t high;          /* the top bits of every byte stage 1 looked at, OR-ed */
    int32_t *next_kept;     /* columnar: the first kept position at or after each one */
    int32_t *kpos;          /* columnar: the kept positions, ascending (nkept of them) */
    Py_ssize_t nkept;
    int32_t *seps;          /* columnar: separator positions (see fast_scan_cols) */
    Py_ssize_t sepcap;
    Py_ssize_t *eolix;      /* columnar: the line ends of a stage-1 batch, as indices in seps */
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

/* ---------------------------------------------------------------- the structural fast path
 *
 * parse_record() looks at every byte up to the last kept field and calls memchr several
 * times per record for the rest. The fast path finds the bytes that matter 64 at a time
 * instead, as bit masks (the idea of simdcsv): delimiters, line ends and quotes. Which bytes
 * are inside quotes follows from the quote mask by a running XOR (a doubled quote toggles
 * twice, so the parity stays right); only delimiters and line ends outside quotes separate
 * fields. The quote rules are checked on the masks too. Stage 1 turns a stretch of input
 * into masks (SSE2, or AVX2 or AVX-512 where the CPU has them, picked when the module
 * loads); stage 2 visits only the separators, passes those of fields not kept in a tight
 * loop, and looks only for the line end once a record's last kept field is read.
 *
 * It takes only what it is sure of: whole records ending in \n or \r\n with well-formed
 * quotes. At anything else (a quote not opening a field, text after a closing quote, a lone
 * \r, a comment line, an over-long field, a record that may have too many fields, the last
 * record of the input without a line end) it stops at the start of that record and
 * parse_record() takes it, with the statuses it reports. */

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AUGER_X86 1 /* AVX2 and AVX-512 variants, picked at run time */
#include <immintrin.h>
#endif

/* what stage 1 tells stage 2 about 64 bytes of input */
typedef struct {
    uint64_t seps;  /* delimiters, \n and \r outside quotes */
    uint64_t eols;  /* \n and \r outside quotes */
    uint64_t wrong; /* a quote breaking the rules, or a \r outside quotes not before \n */
    uint64_t dbl;   /* the second quote of a doubled pair */
} Chunk;

/* the state carried from one 64-byte chunk to the next */
typedef struct {
    uint64_t inside; /* all ones: the last byte was inside quotes */
    uint64_t before; /* 1: the last byte may precede an opening quote */
    uint64_t quote;  /* 1: the last byte was a quote */
} Carry;

/* chunks per stage-1 call: 4 KiB of input, after a first call of 2 chunks doubling up to it
 * (the fast path may stop at the next record, a comment line say, and start again) */
#define FAST_CHUNKS 64

/* bit i set when an odd number of bits at or below i are set */
static inline uint64_t prefix_xor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* Stage 1 after the byte masks of one chunk: the quote parity and the quote rules. `next`
 * is the byte after the chunk (0 at the end of the input). */
static inline void chunk_from_masks(const Scan *sc, uint64_t md, uint64_t mq, uint64_t mn,
                                    uint64_t mc, uint64_t odd, int next, Carry *cy,
                                    Chunk *out) {
    const uint64_t inside = odd ^ cy->inside;
    cy->inside = (uint64_t)0 - (inside >> 63);
    /* an opening quote follows a delimiter, a line end or a closing quote (a doubled one);
     * a closing quote precedes a delimiter, a line end or an opening quote; a \r outside
     * quotes precedes a \n */
    const uint64_t any = md | mq | mn | mc;
    /* (a table rather than four compares: those branch, and mispredict, on the data) */
    const uint64_t next_any = sc->special[next];
    const uint64_t may_open = any << 1 | cy->before;
    const uint64_t may_close = any >> 1 | next_any << 63;
    const uint64_t nl_next = mn >> 1 | (uint64_t)(next == '\n') << 63;
    cy->before = any >> 63;
    out->wrong =
        (mq & inside & ~may_open) | (mq & ~inside & ~may_close) | (mc & ~inside & ~nl_next);
    out->dbl = mq & inside & (mq << 1 | cy->quote);
    cy->quote = mq >> 63;
    out->eols = (mn | mc) & ~inside;
    out->seps = out->eols | (md & ~inside);
}

/* the last bytes of the input, padded with zeros (which match nothing) */
static inline const unsigned char *padded(const Scan *sc, Py_ssize_t base,
                                          unsigned char tail[64]) {
    const unsigned char *p = (const unsigned char *)sc->s + base;
    if (sc->n - base >= 64) return p;
    memset(tail, 0, 64);
    memcpy(tail, p, (size_t)(sc->n - base));
    return tail;
}

static inline int byte_after(const Scan *sc, Py_ssize_t base) {
    return base + 64 < sc->n ? (unsigned char)sc->s[base + 64] : 0;
}

/* Stage 1 for up to `count` chunks from base, portable (SSE2 on any x86-64). */
static Py_ssize_t stage1_base(Scan *sc, Py_ssize_t base, Py_ssize_t count, Carry *cy,
                              Chunk *out) {
    unsigned char tail[64];
    uint64_t high = 0;
    Carry c = *cy; /* in registers: the stores to out might alias *cy */
    Py_ssize_t k = 0;
    for (; k < count && base < sc->n; k++, base += 64) {
        const unsigned char *p = padded(sc, base, tail);
        uint64_t md = 0, mq = 0, mn = 0, mc = 0;
#if defined(__SSE2__)
        const __m128i d = _mm_set1_epi8((char)sc->delim), q = _mm_set1_epi8((char)sc->quote);
        const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
        for (int j = 0; j < 4; j++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * j));
            md |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, d)) << (16 * j);
            mq |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)) << (16 * j);
            mn |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * j);
            mc |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, cr)) << (16 * j);
            high |= (uint64_t)(uint32_t)_mm_movemask_epi8(v);
        }
#else
        for (int j = 0; j < 64; j++) {
            unsigned c = p[j];
            md |= (uint64_t)(c == (unsigned)sc->delim) << j;
            mq |= (uint64_t)(c == (unsigned)sc->quote) << j;
            mn |= (uint64_t)(c == '\n') << j;
            mc |= (uint64_t)(c == '\r') << j;
            high |= c & 0x80;
        }
#endif
        if (sc->quote < 0) mq = 0;
        chunk_from_masks(sc, md, mq, mn, mc, prefix_xor(mq), byte_after(sc, base), &c, &out[k]);
    }
    *cy = c;
    sc->high |= high;
    return k;
}

#ifdef AUGER_X86
/* the quote parity of 64 bytes by a carry-less multiply */
#define CLMUL_PARITY(mq)                                                                    \
    ((uint64_t)_mm_cvtsi128_si64(                                                           \
        _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)(mq)), _mm_set1_epi8(-1), 0)))

/* Stage 1 with AVX2 compares. */
__attribute__((target("avx2,pclmul,bmi"))) static Py_ssize_t stage1_avx2(Scan *sc, Py_ssize_t base,
                                                                     Py_ssize_t count, Carry *cy,
                                                                     Chunk *out) {
    unsigned char tail[64];
    uint64_t high = 0;
    const __m256i d = _mm256_set1_epi8((char)sc->delim), q = _mm256_set1_epi8((char)sc->quote);
    const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
    Carry c = *cy; /* in registers: the stores to out might alias *cy */
    Py_ssize_t k = 0;
    for (; k < count && base < sc->n; k++, base += 64) {
        const unsigned char *p = padded(sc, base, tail);
        __m256i lo = _mm256_loadu_si256((const __m256i *)p);
        __m256i hi = _mm256_loadu_si256((const __m256i *)(p + 32));
#define MASK64(c)                                                                           \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, c)) |                  \
     (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, c)) << 32)
        uint64_t md = MASK64(d), mq = sc->quote >= 0 ? MASK64(q) : 0;
        uint64_t mn = MASK64(nl), mc = MASK64(cr);
#undef MASK64
        high |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_or_si256(lo, hi));
        chunk_from_masks(sc, md, mq, mn, mc, CLMUL_PARITY(mq), byte_after(sc, base), &c, &out[k]);
    }
    *cy = c;
    sc->high |= high;
    return k;
}

/* Stage 1 with AVX-512 compares straight into 64-bit masks. */
__attribute__((target("avx512f,avx512bw,pclmul,bmi"))) static Py_ssize_t stage1_avx512(
    Scan *sc, Py_ssize_t base, Py_ssize_t count, Carry *cy, Chunk *out) {
    unsigned char tail[64];
    const char *const s = sc->s;
    const Py_ssize_t n = sc->n;
    const __m512i d = _mm512_set1_epi8((char)sc->delim), q = _mm512_set1_epi8((char)sc->quote);
    const __m512i nl = _mm512_set1_epi8('\n'), cr = _mm512_set1_epi8('\r');
    const uint64_t quotes = sc->quote >= 0 ? ~(uint64_t)0 : 0;
    __m512i high = _mm512_setzero_si512(); /* the bytes OR-ed: their top bits */
    Carry c = *cy; /* in registers: the stores to out might alias *cy */
    Py_ssize_t k = 0;
    /* chunks with a byte after them: no padding, no check for the end */
    for (; k < count && base + 64 < n; k++, base += 64) {
        const __m512i v = _mm512_loadu_si512((const void *)(s + base));
        uint64_t md = _mm512_cmpeq_epi8_mask(v, d), mq = _mm512_cmpeq_epi8_mask(v, q) & quotes;
        uint64_t mn = _mm512_cmpeq_epi8_mask(v, nl), mc = _mm512_cmpeq_epi8_mask(v, cr);
        /* the rest in general registers: left to itself, the compiler shuttles the masks
         * between those and mask registers, at twice the instructions */
        __asm__("" : "+r"(md), "+r"(mq), "+r"(mn), "+r"(mc));
        high = _mm512_or_si512(high, v);
        chunk_from_masks(sc, md, mq, mn, mc, CLMUL_PARITY(mq), (unsigned char)s[base + 64], &c,
                         &out[k]);
    }
    for (; k < count && base < n; k++, base += 64) {
        const __m512i v = _mm512_loadu_si512((const void *)padded(sc, base, tail));
        const uint64_t mq = _mm512_cmpeq_epi8_mask(v, q) & quotes;
        high = _mm512_or_si512(high, v);
        chunk_from_masks(sc, _mm512_cmpeq_epi8_mask(v, d), mq, _mm512_cmpeq_epi8_mask(v, nl),
                         _mm512_cmpeq_epi8_mask(v, cr), CLMUL_PARITY(mq), byte_after(sc, base),
                         &c, &out[k]);
    }
    *cy = c;
    sc->high |= _mm512_movepi8_mask(high);
    return k;
}
#endif

/* ------------------------------------------------------------ stage 1b: separator lists
 *
 * The separators of `got` chunks from `from` are appended to sp (from entry nsep) as
 * positions less an origin (`from` is relative to it: int32 entries halve the stores), and
 * each line end's entry number to ex (*ne of them); returns the new count of entries.
 * Entries are written a fixed number at a time per chunk, whatever the chunk's count, and
 * those past it overwritten by the next chunk: a loop ending at the count would mispredict
 * its exit in most chunks. So sp needs FLAT_SLACK entries of room past the last one, ex
 * two. The line ends' entry numbers, minus that of the record's first separator, count
 * its fields. *wrong: the chunks' broken rules OR-ed (the caller looks for the first only
 * when there is one). */
#define FLAT_SLACK 16

typedef Py_ssize_t (*Flatten)(const Chunk *, Py_ssize_t, Py_ssize_t, int32_t *, Py_ssize_t,
                              Py_ssize_t *, Py_ssize_t *, uint64_t *);

/* a chunk's line ends: two written always (the top bit keeps the empty case defined), the
 * rare others in a loop; an entry number is the separators of the chunk below it */
#define EOL_ENTRY(ch, nsep, e) ((nsep) + __builtin_popcountll((ch)->seps & (((e) & -(e)) - 1)))
#define FLAT_EOLS(ch, nsep, ex, ne)                                                         \
    do {                                                                                    \
        uint64_t e = (ch)->eols;                                                            \
        for (int i_ = 0; i_ < 2; i_++) {                                                    \
            (ex)[ne] = EOL_ENTRY(ch, nsep, e);                                              \
            (ne) += e != 0;                                                                 \
            e &= e - 1;                                                                     \
        }                                                                                   \
        for (; e; e &= e - 1) (ex)[(ne)++] = EOL_ENTRY(ch, nsep, e);                        \
    } while (0)

static inline __attribute__((always_inline)) Py_ssize_t flatten_body(
    const Chunk *chunks, Py_ssize_t got, Py_ssize_t from, int32_t *sp, Py_ssize_t nsep,
    Py_ssize_t *ex, Py_ssize_t *pne, uint64_t *wrong) {
    Py_ssize_t ne = *pne;
    uint64_t wrongs = 0;
    for (Py_ssize_t k = 0; k < got; k++) {
        const Chunk *ch = &chunks[k];
        const int32_t base = (int32_t)(from + 64 * k);
        wrongs |= ch->wrong;
        uint64_t m = ch->seps;
        int32_t *o = sp + nsep;
        for (int i = 0; i < 8; i++) { /* (the top bit keeps ctz defined once m is empty) */
            o[i] = base + __builtin_ctzll(m | (uint64_t)1 << 63);
            m &= m - 1;
        }
        for (int i = 8; m; i++) {
            o[i] = base + __builtin_ctzll(m);
            m &= m - 1;
        }
        FLAT_EOLS(ch, nsep, ex, ne);
        nsep += __builtin_popcountll(ch->seps);
    }
    *pne = ne;
    *wrong = wrongs;
    return nsep;
}

static Py_ssize_t flatten_base(const Chunk *chunks, Py_ssize_t got, Py_ssize_t from,
                               int32_t *sp, Py_ssize_t nsep, Py_ssize_t *ex, Py_ssize_t *pne,
                               uint64_t *wrong) {
    return flatten_body(chunks, got, from, sp, nsep, ex, pne, wrong);
}

#ifdef AUGER_X86
/* the same with the popcnt instruction (without it, a popcount is a library call) */
__attribute__((target("popcnt,bmi"))) static Py_ssize_t flatten_popcnt(
    const Chunk *chunks, Py_ssize_t got, Py_ssize_t from, int32_t *sp, Py_ssize_t nsep,
    Py_ssize_t *ex, Py_ssize_t *pne, uint64_t *wrong) {
    return flatten_body(chunks, got, from, sp, nsep, ex, pne, wrong);
}

/* With AVX-512 VBMI2: a chunk's separator bit numbers compressed into the low bytes of a
 * register in one instruction, then widened to positions 16 at a time. */
__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt,bmi"))) static Py_ssize_t
flatten_vbmi2(const Chunk *chunks, Py_ssize_t got, Py_ssize_t from, int32_t *sp,
              Py_ssize_t nsep, Py_ssize_t *ex, Py_ssize_t *pne, uint64_t *wrong) {
    static const unsigned char bytes[64] = {
        0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
        22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
        44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
    const __m512i iota = _mm512_loadu_si512((const void *)bytes);
    Py_ssize_t ne = *pne;
    uint64_t wrongs = 0;
    for (Py_ssize_t k = 0; k < got; k++) {
        const Chunk *ch = &chunks[k];
        wrongs |= ch->wrong;
        const __m512i base = _mm512_set1_epi32((int)(from + 64 * k));
        const __m512i bits = _mm512_maskz_compress_epi8(ch->seps, iota);
        const int cnt = __builtin_popcountll(ch->seps);
        int32_t *o = sp + nsep;
        _mm512_storeu_si512((void *)o,
                            _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(bits)),
                                             base));
        if (cnt > 16) {
            unsigned char rest[64];
            _mm512_storeu_si512((void *)rest, bits);
            for (int i = 16; i < cnt; i += 16)
                _mm512_storeu_si512(
                    (void *)(o + i),
                    _mm512_add_epi32(
                        _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(rest + i))),
                        base));
        }
        FLAT_EOLS(ch, nsep, ex, ne);
        nsep += cnt;
    }
    *pne = ne;
    *wrong = wrongs;
    return nsep;
}
#endif

static Flatten flatten = flatten_base; /* goes with the stage 1 in use */

typedef Py_ssize_t (*Stage1)(Scan *, Py_ssize_t, Py_ssize_t, Carry *, Chunk *);

typedef struct {
    const char *name;
    Stage1 fn;
    Flatten flat;
    int usable;
} Stage1Choice;

static Stage1Choice stage1_choices[] = {
    {"portable", stage1_base, flatten_base, 1},
#ifdef AUGER_X86
    {"avx2", stage1_avx2, flatten_popcnt, 0},
    {"avx512", stage1_avx512, flatten_popcnt, 0},
#endif
};

#define N_STAGE1 ((int)(sizeof stage1_choices / sizeof stage1_choices[0]))

static Stage1 stage1 = stage1_base; /* the fastest the CPU has, set when the module loads */

static void pick_stage1(void) {
#ifdef AUGER_X86
    __builtin_cpu_init();
    int base = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("popcnt") &&
               __builtin_cpu_supports("bmi");
    stage1_choices[1].usable = base && __builtin_cpu_supports("avx2");
    stage1_choices[2].usable =
        base && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    if (__builtin_cpu_supports("avx512vbmi2")) stage1_choices[2].flat = flatten_vbmi2;
#endif
    for (int i = 0; i < N_STAGE1; i++) {
        if (stage1_choices[i].usable) {
            stage1 = stage1_choices[i].fn;
            flatten = stage1_choices[i].flat;
        }
    }
}

/* Store field [fs, end) at position fi of the current record: without its quotes and with
 * a doubled quote made single when it opens with one (`doubled`: it holds a doubled quote).
 * 0, or -1 with a status (out of memory) or with status 0 when parse_record must take the
 * record (a field over the size limit). */
static inline int fast_field(Scan *sc, Py_ssize_t fi, Py_ssize_t fs, Py_ssize_t end,
                             int doubled) {
    int col = kept(sc, fi);
    if (col == -1) return 0;
    if (col == -2) return end_field(sc, 0);
    const char *s = sc->s;
    Buf *d = sc->row_major ? &sc->dat[0] : &sc->dat[col];
    if (sc->quote >= 0 && fs < end && (unsigned char)s[fs] == sc->quote) {
        fs++;
        end--; /* the closing quote: the rules put it right before the separator */
        if (end - fs > sc->max_field) return -1;
        while (doubled) { /* copy up to each doubled quote, keeping one of the two */
            const char *q = (const char *)memchr(s + fs, sc->quote, (size_t)(end - fs));
            if (q == NULL) break;
            Py_ssize_t stop = (Py_ssize_t)(q - s) + 1;
            if (buf_put(d, s + fs, stop - fs) < 0) goto nomem;
            fs = stop + 1;
        }
    } else if (end - fs > sc->max_field) {
        return -1;
    }
    const Py_ssize_t len = end - fs;
    if (len <= 16 && fs + 16 <= sc->n && d->len + 16 <= d->cap) {
        memcpy(d->p + d->len, s + fs, 16); /* one 16-byte move; what is past len is junk */
        d->len += len;
    } else if (buf_put(d, s + fs, len) < 0) {
        goto nomem;
    }
    return end_field(sc, sc->row_major ? 0 : col);
nomem:
    sc->status = ST_NOMEM;
    return -1;
}

/* The end of a record whose fields 0..fi-1 were looked at (`fi` past the last kept one
 * when the rest was skipped, as parse_record counts it). */
static inline int fast_record_end(Scan *sc, Py_ssize_t fi) {
    if (sc->row_major) {
        Py_ssize_t lists = sc->off[0].len / 4 - 1;
        if (lists > INT32_MAX) {
            sc->status = ST_TOO_BIG;
            return -1;
        }
        if (buf_i32(&sc->loff, (int32_t)lists) < 0) goto nomem;
        return 0;
    }
    for (Py_ssize_t k = fi; k < sc->nmap && k <= sc->last_kept; k++) { /* a short row */
        int col = sc->colmap[k];
        if (col >= 0 && end_field(sc, col) < 0) return -1;
    }
    if (buf_i32(&sc->counts, (int32_t)(fi < INT32_MAX ? fi : INT32_MAX)) < 0) goto nomem;
    return 0;
nomem:
    sc->status = ST_NOMEM;
    return -1;
}

/* Whether field fi and every later one of the record are not kept (parse_record skips
 * them with skip_rest). */
static inline int rest_unkept(const Scan *sc, Py_ssize_t fi) {
    if (kept(sc, fi) != -1) return 0;
    return sc->row_major ? (sc->limit >= 0 && fi >= sc->limit) : fi > sc->last_kept;
}

/* Store the field [fs, base + bit) at position fi; `last_dbl`: the last doubled quote
 * before the chunk `ch` starting at base. */
static inline int store(Scan *sc, const Chunk *ch, Py_ssize_t base, int bit, Py_ssize_t fi,
                        Py_ssize_t fs, Py_ssize_t last_dbl) {
    int doubled = 0;
    if ((unsigned char)sc->s[fs] == sc->quote) {
        uint64_t below = ch->dbl & (((uint64_t)1 << bit) - 1);
        doubled = (below ? base + 63 - __builtin_clzll(below) : last_dbl) > fs;
    }
    return fast_field(sc, fi, fs, base + bit, doubled);
}

/* Drop what was stored of a record not finished: every finished record has one offset in
 * each column and one count (columnar), or one list offset (row-major). */
static void take_back(Scan *sc, Py_ssize_t nbuf) {
    if (sc->row_major) {
        const Py_ssize_t rows = sc->loff.len / 4 - 1;
        const int32_t strings = ((const int32_t *)sc->loff.p)[rows];
        sc->off[0].len = ((Py_ssize_t)strings + 1) * 4;
        sc->dat[0].len = ((const int32_t *)sc->off[0].p)[strings];
        return;
    }
    const Py_ssize_t rows = sc->counts.len / 4;
    for (Py_ssize_t k = 0; k < nbuf; k++) {
        sc->off[k].len = (rows + 1) * 4;
        sc->dat[k].len = ((const int32_t *)sc->off[k].p)[rows];
    }
}

/* The fast path for columnar scans. Stage 1's separator masks are turned into a list of
 * separator positions, and each line end into its index in that list, a batch at a time:
 * the fields of a record are then the stretches between consecutive entries, so each kept
 * field is found by its position alone (field k of a record whose first separator is entry
 * j ends at entry j + k and starts after entry j + k - 1) instead of by walking every
 * separator before it, and the record's field count is the distance between its line end
 * and the previous one. Writing out the positions costs a few instructions per separator
 * with no branch that depends on the data, where a walk mispredicts at every chunk and
 * field boundary. Same rules and the same stops as fast_scan (which row-major scans use). */
/* Whether [from, to) holds the quote byte: 16-byte compares rather than a call to memchr
 * for a field of a few bytes. */
static inline int has_quote(const char *s, Py_ssize_t from, Py_ssize_t to, Py_ssize_t n,
                            int quote) {
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8((char)quote);
    for (; from < to && from + 16 <= n; from += 16) {
        unsigned hits = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + from)), q));
        if (to - from < 16) hits &= (1u << (to - from)) - 1;
        if (hits) return 1;
    }
    if (from >= to) return 0;
#endif
    return memchr(s + from, quote, (size_t)(to - from)) != NULL;
}

/* fast_field for a kept field of a columnar scan: a field of up to 32 bytes (the common
 * case) is copied, and checked for doubled quotes, with two 16-byte moves whatever its
 * length, where a branch on the length mispredicts on fields of varied lengths. */
static inline int col_field(Scan *sc, Py_ssize_t fi, Py_ssize_t fs, Py_ssize_t end) {
    const char *s = sc->s;
    const int quoted = sc->quote >= 0 && fs < end && (unsigned char)s[fs] == sc->quote;
#if defined(__SSE2__)
    /* (quoted: the quotes are not copied; the rules put the closing one at end - 1) */
    const int col = sc->colmap[fi];
    Buf *d = &sc->dat[col];
    const Py_ssize_t from = fs + quoted, len = end - quoted - from;
    if (len <= 32 && len <= sc->max_field && from + 32 <= sc->n && d->len + 32 <= d->cap) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(s + from));
        const __m128i b = _mm_loadu_si128((const __m128i *)(s + from + 16));
        uint64_t quotes = 0; /* a quote inside a quoted field is half of a doubled one */
        if (quoted) {
            const __m128i q = _mm_set1_epi8((char)sc->quote);
            quotes = (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, q)) |
                     (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, q)) << 16;
            quotes &= ((uint64_t)1 << len) - 1;
        }
        if (!quotes) {
            _mm_storeu_si128((__m128i *)(d->p + d->len), a);
            _mm_storeu_si128((__m128i *)(d->p + d->len + 16), b); /* what is past len: junk */
            d->len += len;
            return end_field(sc, col);
        }
    }
#endif
    return fast_field(sc, fi, fs, end,
                      quoted && end - fs > 2 && has_quote(s, fs + 1, end - 1, sc->n, sc->quote));
}

static Py_ssize_t fast_scan_cols(Scan *sc, Py_ssize_t pos, Py_ssize_t nbuf, Py_ssize_t *rows) {
    const char *s = sc->s;
    const Py_ssize_t n = sc->n;
    const int comment = sc->comment;
    /* (copies: the compiler reloads what it reads through sc after every byte stored) */
    const Py_ssize_t last = sc->last_kept, nkept = sc->nkept, max_fields = sc->max_fields;
    const int32_t *const kpos = sc->kpos, *const colmap = sc->colmap;
    Py_ssize_t done = 0;   /* records stored */
    int32_t *seen = NULL;  /* where the next record's count goes, in room made for a batch */
    Py_ssize_t rs = pos;   /* the start of the record not yet stored */
    Py_ssize_t j = 0;      /* its first separator's entry in seps (or the \n of a \r\n) */
    Py_ssize_t nsep = 0;   /* entries in seps */
    Py_ssize_t org = pos;  /* what the entries are relative to */
    Py_ssize_t bad = PY_SSIZE_T_MAX; /* where the first broken rule was seen */
    Carry cy = {0, 1, 0};  /* pos is a line start: a quote may open there */
    Chunk chunks[FAST_CHUNKS];
#define SYNC()                                                                              \
    do {                                                                                    \
        if (seen != NULL) sc->counts.len = (char *)seen - sc->counts.p;                     \
        seen = NULL;                                                                        \
        *rows += done;                                                                      \
        done = 0;                                                                           \
    } while (0)
#define GIVE_UP()                                                                           \
    do {                                                                                    \
        SYNC();                                                                             \
        take_back(sc, nbuf);                                                                \
        return rs;                                                                          \
    } while (0)
    if (comment >= 0 && (unsigned char)s[rs] == comment) return rs;
    Py_ssize_t count = 2;
    for (Py_ssize_t from = pos; from < n;) {
        /* room for this batch's separators after those of the record it continues */
        if (from + 64 * count - org > INT32_MAX) GIVE_UP(); /* a record over 2 GB so far */
        if (nsep + 64 * count + FLAT_SLACK > sc->sepcap) {
            if (nsep > sc->max_fields) GIVE_UP(); /* parse_record reports it */
            Py_ssize_t cap = 2 * (nsep + 64 * count + FLAT_SLACK);
            int32_t *p = (int32_t *)realloc(sc->seps, sizeof(int32_t) * (size_t)cap);
            if (p == NULL) {
                sc->status = ST_NOMEM;
                GIVE_UP();
            }
            sc->seps = p;
            sc->sepcap = cap;
        }
        int32_t *const sp = sc->seps;
        Py_ssize_t *const ex = sc->eolix;
        const Py_ssize_t got = stage1(sc, from, count, &cy, chunks);
        if (count < FAST_CHUNKS) count *= 2;
        Py_ssize_t ne = 0;
        uint64_t wrong;
        nsep = flatten(chunks, got, from - org, sp, nsep, ex, &ne, &wrong);
        for (Py_ssize_t k = 0; wrong && k < got && bad == PY_SSIZE_T_MAX; k++) {
            if (chunks[k].wrong) bad = from + 64 * k + __builtin_ctzll(chunks[k].wrong);
        }
        from += 64 * got;
        /* room for a count for every record the batch may end */
        if (buf_need(&sc->counts, 4 * ne) < 0) {
            sc->status = ST_NOMEM;
            GIVE_UP();
        }
        seen = (int32_t *)(sc->counts.p + sc->counts.len);
        for (Py_ssize_t m = 0; m < ne; m++) {
            const Py_ssize_t je = ex[m], at = org + sp[je];
            if (at < rs) continue; /* the \n of a \r\n already taken */
            if (at >= bad) GIVE_UP(); /* the record breaks a rule */
            if (org + sp[j] < rs) j++; /* past that \n */
            const Py_ssize_t after = at + ((unsigned char)s[at] == '\r' ? 2 : 1);
            const Py_ssize_t nf = je - j + 1; /* fields in the record */
            if (nf == 1 && at == rs) { /* an empty line, not a record */
            } else {
                if (nf > max_fields) GIVE_UP();
                for (Py_ssize_t i = 0; i < nkept; i++) {
                    const Py_ssize_t fi = kpos[i];
                    if (fi >= nf) { /* a short row: "" */
                        if (end_field(sc, colmap[fi]) < 0) GIVE_UP();
                        continue;
                    }
                    const Py_ssize_t fs = fi ? org + sp[j + fi - 1] + 1 : rs;
                    const Py_ssize_t end = org + sp[j + fi];
                    if (col_field(sc, fi, fs, end) < 0) GIVE_UP();
                }
                /* fields counted up to the last kept one, as parse_record counts a skipped
                 * rest */
                *seen++ = (int32_t)(nf <= last ? nf : last + 1);
                done++;
            }
            rs = after;
            j = je + 1;
            if (comment >= 0 && rs < n && (unsigned char)s[rs] == comment) {
                SYNC();
                return rs;
            }
        }
        SYNC();
        /* keep the entries of the record not finished (all at rs - 1 or after: its
         * separators and maybe the \n of a \r\n before it), relative to rs - 1 from now */
        const int32_t shift = (int32_t)(rs - 1 - org);
        for (Py_ssize_t i = j; i < nsep; i++) sp[i - j] = sp[i] - shift;
        nsep -= j;
        j = 0;
        org = rs - 1;
    }
    GIVE_UP(); /* the last record has no line end: parse_record takes it */
#undef GIVE_UP
#undef SYNC
}

/* Parse whole records from pos (a line start) while they are plain; returns where it
 * stopped (a line start), adding the records stored to *rows. */
static Py_ssize_t fast_scan(Scan *sc, Py_ssize_t pos, Py_ssize_t nbuf, Py_ssize_t *rows) {
    if (sc->kpos != NULL) return fast_scan_cols(sc, pos, nbuf, rows);
    const char *s = sc->s;
    const Py_ssize_t n = sc->n;
    const int comment = sc->comment;
    Py_ssize_t rs = pos, fs = pos, fi = 0; /* record start, field start, field position */
    int skipping = 0; /* the rest of the record is not kept: only line ends matter */
    Py_ssize_t bad = PY_SSIZE_T_MAX; /* where the first broken rule was seen */
    Py_ssize_t last_dbl = -1; /* the last doubled quote in the chunks before this one */
    Carry cy = {0, 1, 0};     /* pos is a line start: a quote may open there */
    Chunk chunks[FAST_CHUNKS];
    const int skip_all = rest_unkept(sc, 0); /* no field of any record is kept */
#define RECORD_START()                                                                      \
    do {                                                                                    \
        if (comment >= 0 && rs < n && (unsigned char)s[rs] == comment) return rs;          \
        fi = 0;                                                                             \
        skipping = skip_all;                                                                \
    } while (0)
#define GIVE_UP()                                                                           \
    do {                                                                                    \
        take_back(sc, nbuf);                                                                \
        return rs;                                                                          \
    } while (0)
    /* At the start of field fi, not kept: pass the delimiters of the fields up to the next
     * kept one in a tight loop. A line end or a broken rule stops it; the loop below takes
     * those. */
#define PASS_UNKEPT()                                                                       \
    do {                                                                                    \
        if (sc->next_kept != NULL && sc->colmap[fi] < 0) {                                  \
            Py_ssize_t need = sc->next_kept[fi] - fi;                                       \
            uint64_t passed = 0;                                                            \
            while (need > 0 && live) {                                                      \
                uint64_t low = live & ((uint64_t)0 - live);                                 \
                if (low & stop) break;                                                      \
                live ^= low;                                                                \
                passed = low;                                                               \
                need--;                                                                     \
                fi++;                                                                       \
            }                                                                               \
            if (passed) fs = base + __builtin_ctzll(passed) + 1;                            \
        }                                                                                   \
    } while (0)
    RECORD_START();
    Py_ssize_t count = 2;
    for (Py_ssize_t from = pos; from < n;) {
        const Py_ssize_t got = stage1(sc, from, count, &cy, chunks);
        if (count < FAST_CHUNKS) count *= 2;
        for (Py_ssize_t k = 0; k < got; k++) {
            const Chunk *ch = &chunks[k];
            const Py_ssize_t base = from + 64 * k;
            if (ch->wrong && bad == PY_SSIZE_T_MAX) bad = base + __builtin_ctzll(ch->wrong);
            /* bits the tight loop below must not pass: line ends, and any at or after `bad` */
            const uint64_t stop =
                ch->eols | (bad - base >= 64  ? 0
                            : bad <= base ? ~(uint64_t)0
                                          : ~(uint64_t)0 << (bad - base));
            uint64_t live = skipping ? ch->eols : ch->seps; /* separators still to visit */
            while (live) {
                const int bit = __builtin_ctzll(live);
                live &= live - 1;
                const Py_ssize_t at = base + bit;
                if (at < fs) continue;    /* the \n of a \r\n already taken */
                if (at >= bad) GIVE_UP(); /* the record breaks a rule */
                if (!(ch->eols >> bit & 1)) { /* a delimiter (never met while skipping) */
                    if (kept(sc, fi) != -1 && store(sc, ch, base, bit, fi, fs, last_dbl) < 0)
                        GIVE_UP();
                    if (++fi >= sc->max_fields) GIVE_UP();
                    fs = at + 1;
                    if (rest_unkept(sc, fi)) {
                        skipping = 1;
                        live &= ch->eols;
                    } else {
                        PASS_UNKEPT();
                    }
                    continue;
                }
                const Py_ssize_t after = at + ((unsigned char)s[at] == '\r' ? 2 : 1);
                if (fi == 0 && at == fs) { /* an empty line, not a record */
                    rs = fs = after;
                    RECORD_START();
                } else {
                    if (skipping) { /* fi: the first field not looked at */
                        if (at - rs + 1 >= sc->max_fields) GIVE_UP(); /* maybe too many */
                    } else {
                        if (store(sc, ch, base, bit, fi, fs, last_dbl) < 0) GIVE_UP();
                        fi++;
                    }
                    if (fast_record_end(sc, fi) < 0) GIVE_UP();
                    ++*rows;
                    rs = fs = after;
                    RECORD_START();
                }
                /* the bits after this one, of the kind the new record needs */
                live = (skipping ? ch->eols : ch->seps) & ~(((uint64_t)2 << bit) - 1);
                if (!skipping) PASS_UNKEPT();
            }
            if (ch->dbl) last_dbl = base + 63 - __builtin_clzll(ch->dbl);
        }
        from += 64 * got;
    }
    GIVE_UP(); /* the last record has no line end: parse_record takes it */
#undef RECORD_START
#undef GIVE_UP
#undef PASS_UNKEPT
}

static PyObject *bytes_of(Buf *b) {
    return PyBytes_FromStringAndSize(b->p ? b->p : "", b->len);
}

static PyObject *textscan_scan(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"data",  "final",     "delimiter",  "quote",      "comment",
                             "keep",  "row_major", "limit",      "skip",       "skip_line",
                             "max_field", "max_fields", "structural", NULL};
    Py_buffer data, keep;
    int final, delim, quote, comment, row_major, skip_line;
    Py_ssize_t limit, skip, max_field, max_fields;
    int structural = 1; /* the fast path may run (off: parse_record alone, for tests) */
    keep.buf = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*piiiz*pnnpnn|p", kwlist, &data, &final,
                                     &delim, &quote, &comment, &keep, &row_major, &limit, &skip,
                                     &skip_line, &max_field, &max_fields, &structural))
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
    if (!row_major && sc.last_kept >= 0 && sc.last_kept + 1 < max_fields) {
        /* for each position, the first kept one at or after it: the fast path passes the
         * fields in between without looking at them one by one */
        sc.next_kept = (int32_t *)malloc(sizeof(int32_t) * (size_t)(sc.nmap + 1));
        if (sc.next_kept == NULL) {
            PyBuffer_Release(&data);
            if (keep.buf != NULL) PyBuffer_Release(&keep);
            return PyErr_NoMemory();
        }
        sc.next_kept[sc.nmap] = (int32_t)sc.nmap;
        for (Py_ssize_t i = sc.nmap - 1; i >= 0; i--)
            sc.next_kept[i] = sc.colmap[i] >= 0 ? (int32_t)i : sc.next_kept[i + 1];
        sc.kpos = (int32_t *)malloc(sizeof(int32_t) * (size_t)(sc.last_kept + 1));
        sc.eolix = (Py_ssize_t *)malloc(sizeof(Py_ssize_t) * (64 * FAST_CHUNKS + 2));
        if (sc.kpos == NULL || sc.eolix == NULL) {
            free(sc.next_kept);
            free(sc.kpos);
            free(sc.eolix);
            PyBuffer_Release(&data);
            if (keep.buf != NULL) PyBuffer_Release(&keep);
            return PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i <= sc.last_kept; i++)
            if (sc.colmap[i] >= 0) sc.kpos[sc.nkept++] = (int32_t)i;
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
    int slow_consumed = 0; /* parse_record or the line rules consumed some of it */
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
        if (structural && skip == 0) {
            Py_ssize_t got = 0, reached = fast_scan(&sc, pos, nbuf, &got);
            rows += got;
            if (sc.status) break;
            if (reached > pos) {
                consumed = pos = reached;
                continue;
            }
        }
        char c = s[pos];
        if (c == '\n') { /* an empty line */
            consumed = ++pos;
            slow_consumed = 1;
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
            slow_consumed = 1;
            continue;
        }
        if (comment >= 0 && (unsigned char)c == comment) {
            const char *nl = (const char *)memchr(s + pos, '\n', (size_t)(sc.n - pos));
            if (nl == NULL) {
                if (!sc.final) break;
                consumed = pos = sc.n;
                slow_consumed = 1;
                break;
            }
            consumed = pos = (Py_ssize_t)(nl - s) + 1;
            slow_consumed = 1;
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
        slow_consumed = 1;
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
    /* every consumed byte went through stage 1 and none has its top bit set: the caller
     * need not check the block for UTF-8 */
    int ascii = !slow_consumed && !skip_line && sc.high == 0 && (consumed > 0 || sc.n == 0);
    result = Py_BuildValue("(snnnNNO)", status_text[sc.status], consumed, rows, skip, payload,
                           bytes_of(&sc.counts), ascii ? Py_True : Py_False);
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
    free(sc.next_kept);
    free(sc.kpos);
    free(sc.eolix);
    free(sc.seps);
    free(marks);
    PyBuffer_Release(&data);
    if (keep.buf != NULL) PyBuffer_Release(&keep);
    return result;
}

static PyObject *textscan_stage1_variants(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    PyObject *out = PyList_New(0);
    for (int i = 0; out != NULL && i < N_STAGE1; i++) {
        if (!stage1_choices[i].usable) continue;
        PyObject *name = PyUnicode_FromString(stage1_choices[i].name);
        if (name == NULL || PyList_Append(out, name) < 0) Py_CLEAR(out);
        Py_XDECREF(name);
    }
    return out;
}

static PyObject *textscan_use_stage1(PyObject *self, PyObject *arg) {
    (void)self;
    const char *want = PyUnicode_AsUTF8(arg);
    if (want == NULL) return NULL;
    for (int i = 0; i < N_STAGE1; i++) {
        if (stage1_choices[i].usable && strcmp(stage1_choices[i].name, want) == 0) {
            stage1 = stage1_choices[i].fn;
            flatten = stage1_choices[i].flat;
            Py_RETURN_NONE;
        }
    }
    PyErr_Format(PyExc_ValueError, "no stage 1 variant %R on this CPU", arg);
    return NULL;
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))textscan_scan, METH_VARARGS | METH_KEYWORDS,
     "scan(data, final, delimiter, quote, comment, keep, row_major, limit, skip, skip_line, "
     "max_field, max_fields, structural=True) -> (fallback_reason, consumed, rows, skip_left, "
     "buffers, counts, ascii)"},
    {"stage1_variants", textscan_stage1_variants, METH_NOARGS,
     "The fast path's stage 1 variants this CPU runs, slowest first (the last is in use)."},
    {"use_stage1", textscan_use_stage1, METH_O,
     "Use the named stage 1 variant from now on (for tests and benchmarks)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_textscan",
    "Delimited-text tokenizer that keeps only the projected fields.", -1, methods,
};

PyMODINIT_FUNC PyInit__textscan(void) {
    pick_stage1();
    return PyModule_Create(&module);
}
