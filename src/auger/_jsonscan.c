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
 * line and hold no raw control character and no escape but JSON's own (a backslash before
 * another character is Drill's dialect, which the Python reader judges), brackets must balance, and what lies outside strings must be JSON's number characters,
 * literals (true, false, null, NaN, Infinity) and punctuation. Anything the walk does not
 * accept (an escaped or differently-cased wanted key, an object spanning lines, a scalar or
 * array at top level, a malformed token) stops it with a reason: the caller hands the rest of
 * the file to the Python reader, which reads it as Drill would or reports where it breaks.
 *
 * The walk below (the reference) looks at every byte, one at a time. The fast path in front
 * of it finds the bytes that matter 64 at a time as bit masks (stage 1) and then visits only
 * those (stage 2); at anything it is not sure of it hands the object to the reference walk,
 * so both accept and produce exactly the same. See "the structural fast path" below.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ctype.h>
#include <stdint.h>
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
    /* for the fast path: bit k of short_lens set when a wanted key is k bytes long (k < 64),
     * long_keys when one is longer; fold[c] is tolower(c), looked up once per call */
    uint64_t short_lens;
    int long_keys;
    unsigned char fold[256];
    uint64_t *key8; /* the first 8 bytes of each wanted key, zero-padded, as a number */
    unsigned char maybe[256]; /* by name_hash(): set where a wanted key may be */
} Walk;

/* A hash of a member name by its length and its last byte case-blind (the quote before it
 * when empty): a name equal to a wanted key, in any case, has that key's hash. */
static inline unsigned name_hash(const unsigned char *fold, const unsigned char *k,
                                 Py_ssize_t len) {
    return (fold[k[len - 1]] + 37u * (unsigned)len) & 255u;
}

static unsigned char token_char[256];  /* may appear in a scalar token */
static unsigned char string_stop[256];  /* ends a run of plain string bytes */
static unsigned char escape_ok[256];    /* may follow a backslash in strict JSON */

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
            const unsigned char e = s[p + 1];
            if (!escape_ok[e]) return -2; /* a line break, or an escape strict JSON lacks */
            if (e == 'u') {
                for (Py_ssize_t h = p + 2; h < p + 6; h++) {
                    if (h >= n) return w->final ? -2 : -1;
                    if (!isxdigit(s[h])) return -2;
                }
                p += 6;
                continue;
            }
            p += 2;
            continue;
        }
        return -2; /* a raw line break (the object spans lines) or another control character */
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

/* ---------------------------------------------------------------- the structural fast path
 *
 * Stage 1 turns each 64 bytes into one bit mask of "structural" positions, those stage 2 must
 * look at: every unescaped quote, every line break (inside strings too), every backslash
 * and every control character inside a string, and outside strings every byte but whitespace and the later characters of
 * a number-like token ([0-9+-.eE] after another token character). So outside strings that is
 * the punctuation {}[],: (but a colon or comma right after a closing quote: see
 * structurals()), each token's first character, every letter of true/false/null/NaN/Infinity
 * but e and E, and every byte JSON does not allow there. Which bytes are inside
 * strings follows from the unescaped quotes by a running XOR (a carry-less multiply where the
 * CPU has one); a quote is escaped when an odd run of backslashes precedes it. Escapes and
 * string state carry from one chunk to the next.
 *
 * Stage 2 walks each object over those positions only. Between two structural positions
 * there is nothing but whitespace, the rest of a number, the inside of a string or the colon
 * or comma after a closing quote (stage 2 reads that byte), so the grammar the reference walk
 * checks byte by byte is checked on the sequence of structural characters: a name, its
 * closing quote (a backslash or line break instead: hand over), a colon, a value (a string,
 * a bracketed value whose brackets it counts, a number whose letters would show up as the
 * next position, or a literal compared in full), then a comma or the closing brace. Anything
 * else there (a line break, a stray byte, a letter glued to a number, -Infinity) hands the
 * object to the reference walk, which accepts it (the fast path then goes on after it) or
 * says why not.
 *
 * Only objects starting before the last line break of the input take the fast path: every
 * one of them either ends before that line break or is refused at it, so stage 2 never
 * looks past it (no bounds checks) and an object cut by the end of the input is always the
 * reference walk's. */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AUGER_X86 1 /* SSSE3, AVX2 and AVX-512 variants, picked at run time */
#include <immintrin.h>
#endif

/* byte classes, as bits of one byte (for the portable stage 1): JSON whitespace but the line
 * break, characters of a number, characters of a token (numbers and the literals), the quote,
 * the backslash, the line break, the colon and the comma */
enum {
    C_WS = 1,
    C_NUM = 2,
    C_TOK = 4,
    C_QUOTE = 8,
    C_BSLASH = 16,
    C_NL = 32,
    C_PUNCT = 64,
    C_CTRL = 128
};
static unsigned char byte_class[256];
static unsigned char number_start[256]; /* a token starting here is a number (or -Infinity) */

/* The same classes by two 16-entry lookups, one on each nibble, ANDed: each bit below is a
 * set of high nibbles times a set of low nibbles, and a class is the union of some bits
 * (bytes from 0x80 up have no bit: their high-nibble entries are 0). */
#define NB_WS 0xC0  /* 0x40: tab, CR; 0x80: space */
#define NB_NUM 0x23 /* 0x01: + - .; 0x02: digits; 0x20: E e */
#define NB_TOK 0x3F /* and 0x04: I N; 0x08: a f i l n; 0x10: r s t u y */
static const unsigned char nibble_lo[16] = {0x82, 0x0A, 0x12, 0x12, 0x12, 0x32, 0x0A, 0x02,
                                            0x02, 0x5E, 0x00, 0x01, 0x08, 0x41, 0x0D, 0x00};
static const unsigned char nibble_hi[16] = {0x40, 0x00, 0x81, 0x02, 0x24, 0x00, 0x28, 0x10,
                                            0, 0, 0, 0, 0, 0, 0, 0};

/* what carries from one chunk to the next */
typedef struct {
    uint64_t esc;    /* 1: the first byte of the next chunk is escaped */
    uint64_t inside; /* all ones: the last byte was inside a string */
    uint64_t tok;    /* 1: the last byte was a token character */
    uint64_t close;  /* 1: the last byte was a closing quote */
} Carry;

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

/* The quotes of a chunk that no backslash escapes. A byte is escaped when the run of
 * backslashes before it is odd, counted from the first one not itself escaped; adding a
 * run's first bit to the run carries to the byte after it, and the run is odd when that
 * byte's position and the first bit's differ in parity. */
static inline uint64_t unescaped_quotes(uint64_t q, uint64_t bs, Carry *cy) {
    if ((bs | cy->esc) == 0) return q; /* most chunks: no backslash at all */
    const uint64_t even = 0x5555555555555555ULL;
    const uint64_t b = bs & ~cy->esc; /* an escaped backslash escapes nothing */
    const uint64_t starts = b & ~(b << 1);
    const uint64_t after_even = (b + (starts & even)) & ~b;
    const uint64_t after_odd = (b + (starts & ~even)) & ~b;
    const uint64_t escaped = (after_even & ~even) | (after_odd & even) | cy->esc;
    /* a run reaching the last byte escapes the next chunk's first when it is odd */
    const int top_run = (b >> 63) ? (~b ? __builtin_clzll(~b) : 64) : 0;
    cy->esc = (uint64_t)(top_run & 1);
    return q & ~escaped;
}

/* The structural positions of a chunk given its masks and its in-string mask (from the
 * opening quote to the byte before the closing one). A colon or comma right after a closing
 * quote is left out: stage 2 looks at the byte after each closing quote it meets at the top
 * level anyway (where "name": and "value", are most of what there is), and inside brackets
 * commas and colons may be anywhere. */
static inline uint64_t structurals(uint64_t q, uint64_t inside, uint64_t bs, uint64_t nl,
                                   uint64_t ws, uint64_t num, uint64_t tok, uint64_t punct,
                                   uint64_t ctrl, Carry *cy) {
    const uint64_t after_tok = tok << 1 | cy->tok;
    const uint64_t closing = q & ~inside;
    const uint64_t after_close = closing << 1 | cy->close;
    cy->tok = tok >> 63;
    cy->close = closing >> 63;
    cy->inside = (uint64_t)0 - (inside >> 63);
    const uint64_t quiet = ws | (num & after_tok) | (punct & after_close);
    return q | nl | ((bs | ctrl) & inside) | (~inside & ~quiet);
}

/* chunk k of the input, padded with zeros past its end (a NUL is a stray byte: structural) */
static inline const unsigned char *chunk_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t k,
                                            unsigned char tail[64]) {
    const Py_ssize_t base = k * 64;
    if (n - base >= 64) return s + base;
    memset(tail, 0, 64);
    memcpy(tail, s + base, (size_t)(n - base));
    return tail;
}

/* Stage 1 for chunks [0, nwords), portable: a table lookup per byte, eight class bytes at a
 * time turned into eight bits of each mask by a multiply (bit 0 of each byte lands in the
 * top byte, byte i's at bit 56 + i). */
static void stage1_base(const unsigned char *s, Py_ssize_t n, Py_ssize_t nwords, uint64_t *out) {
    unsigned char tail[64];
    Carry cy = {0, 0, 0, 0};
    for (Py_ssize_t k = 0; k < nwords; k++) {
        const unsigned char *p = chunk_at(s, n, k, tail);
        uint64_t m[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int j = 0; j < 64; j += 8) {
            uint64_t cls = 0;
            for (int b = 0; b < 8; b++) cls |= (uint64_t)byte_class[p[j + b]] << (8 * b);
            for (int c = 0; c < 8; c++) {
                const uint64_t ones = cls >> c & 0x0101010101010101ULL;
                m[c] |= (ones * 0x0102040810204080ULL) >> 56 << j;
            }
        }
        uint64_t ws = m[0], num = m[1], tok = m[2], q = m[3], bs = m[4], nl = m[5], punct = m[6];
        q = unescaped_quotes(q, bs, &cy);
        const uint64_t inside = prefix_xor(q) ^ cy.inside;
        out[k] = structurals(q, inside, bs, nl, ws, num, tok, punct, m[7], &cy);
    }
}

#ifdef AUGER_X86
/* the in-string parity of 64 bytes by a carry-less multiply by all ones */
#define CLMUL_PARITY(q)                                                                     \
    ((uint64_t)_mm_cvtsi128_si64(                                                           \
        _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)(q)), _mm_set1_epi8(-1), 0)))

/* Stage 1 with SSSE3 (any x86-64 of the last fifteen years), 16 bytes at a time: the
 * compares and nibble lookups of the AVX2 variant, the parity by shifts. */
__attribute__((target("ssse3"))) static void stage1_ssse3(const unsigned char *s, Py_ssize_t n,
                                                          Py_ssize_t nwords, uint64_t *out) {
    unsigned char tail[64];
    Carry cy = {0, 0, 0, 0};
    const __m128i lo_tab = _mm_loadu_si128((const __m128i *)nibble_lo);
    const __m128i hi_tab = _mm_loadu_si128((const __m128i *)nibble_hi);
    const __m128i low4 = _mm_set1_epi8(0x0F), zero = _mm_setzero_si128();
    const __m128i vq = _mm_set1_epi8('"'), vb = _mm_set1_epi8('\\');
    const __m128i vn = _mm_set1_epi8('\n');
    const __m128i vcolon = _mm_set1_epi8(':'), vcomma = _mm_set1_epi8(',');
    const __m128i mws = _mm_set1_epi8((char)NB_WS), mnum = _mm_set1_epi8(NB_NUM);
    const __m128i mtok = _mm_set1_epi8(NB_TOK), vctrl = _mm_set1_epi8(0x1F);
    for (Py_ssize_t k = 0; k < nwords; k++) {
        const unsigned char *p = chunk_at(s, n, k, tail);
        uint64_t m[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int h = 0; h < 4; h++) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * h));
            const __m128i c =
                _mm_and_si128(_mm_shuffle_epi8(lo_tab, _mm_and_si128(v, low4)),
                              _mm_shuffle_epi8(hi_tab, _mm_and_si128(_mm_srli_epi16(v, 4), low4)));
#define BITS(x) ((uint64_t)(uint32_t)_mm_movemask_epi8(x) << (16 * h))
#define HAS(x) (BITS(_mm_cmpeq_epi8(_mm_and_si128(c, x), zero)) ^ (0xFFFFULL << (16 * h)))
            m[0] |= BITS(_mm_cmpeq_epi8(v, vq));
            m[1] |= BITS(_mm_cmpeq_epi8(v, vb));
            m[2] |= BITS(_mm_cmpeq_epi8(v, vn));
            m[3] |= HAS(mws);
            m[4] |= HAS(mnum);
            m[5] |= HAS(mtok);
            m[6] |= BITS(_mm_or_si128(_mm_cmpeq_epi8(v, vcolon), _mm_cmpeq_epi8(v, vcomma)));
            m[7] |= BITS(_mm_cmpeq_epi8(_mm_min_epu8(v, vctrl), v)); /* bytes below 0x20 */
#undef HAS
#undef BITS
        }
        const uint64_t q = unescaped_quotes(m[0], m[1], &cy);
        const uint64_t inside = prefix_xor(q) ^ cy.inside;
        out[k] = structurals(q, inside, m[1], m[2], m[3], m[4], m[5], m[6], m[7], &cy);
    }
}

/* Stage 1 with AVX2: compares for the quote, backslash and line break, the nibble lookups
 * for the rest. */
__attribute__((target("avx2,pclmul"))) static void stage1_avx2(const unsigned char *s,
                                                               Py_ssize_t n, Py_ssize_t nwords,
                                                               uint64_t *out) {
    unsigned char tail[64];
    Carry cy = {0, 0, 0, 0};
    const __m256i lo_tab = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)nibble_lo));
    const __m256i hi_tab = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)nibble_hi));
    const __m256i low4 = _mm256_set1_epi8(0x0F), zero = _mm256_setzero_si256();
    const __m256i vq = _mm256_set1_epi8('"'), vb = _mm256_set1_epi8('\\');
    const __m256i vn = _mm256_set1_epi8('\n');
    const __m256i vcolon = _mm256_set1_epi8(':'), vcomma = _mm256_set1_epi8(',');
    const __m256i mws = _mm256_set1_epi8((char)NB_WS), mnum = _mm256_set1_epi8(NB_NUM);
    const __m256i mtok = _mm256_set1_epi8(NB_TOK), vctrl = _mm256_set1_epi8(0x1F);
    for (Py_ssize_t k = 0; k < nwords; k++) {
        const unsigned char *p = chunk_at(s, n, k, tail);
        uint64_t m[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int h = 0; h < 2; h++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * h));
            const __m256i c = _mm256_and_si256(
                _mm256_shuffle_epi8(lo_tab, _mm256_and_si256(v, low4)),
                _mm256_shuffle_epi8(hi_tab, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4)));
#define BITS(x) ((uint64_t)(uint32_t)_mm256_movemask_epi8(x) << (32 * h))
#define HAS(x)                                                                              \
    (~BITS(_mm256_cmpeq_epi8(_mm256_and_si256(c, x), zero)) & (0xFFFFFFFFULL << (32 * h)))
            m[0] |= BITS(_mm256_cmpeq_epi8(v, vq));
            m[1] |= BITS(_mm256_cmpeq_epi8(v, vb));
            m[2] |= BITS(_mm256_cmpeq_epi8(v, vn));
            m[3] |= HAS(mws);
            m[4] |= HAS(mnum);
            m[5] |= HAS(mtok);
            m[6] |=
                BITS(_mm256_or_si256(_mm256_cmpeq_epi8(v, vcolon), _mm256_cmpeq_epi8(v, vcomma)));
            m[7] |= BITS(_mm256_cmpeq_epi8(_mm256_min_epu8(v, vctrl), v)); /* below 0x20 */
#undef HAS
#undef BITS
        }
        const uint64_t q = unescaped_quotes(m[0], m[1], &cy);
        const uint64_t inside = CLMUL_PARITY(q) ^ cy.inside;
        out[k] = structurals(q, inside, m[1], m[2], m[3], m[4], m[5], m[6], m[7], &cy);
    }
}

/* Stage 1 with AVX-512: the same, straight into 64-bit masks. */
__attribute__((target("avx512f,avx512bw,pclmul"))) static void stage1_avx512(
    const unsigned char *s, Py_ssize_t n, Py_ssize_t nwords, uint64_t *out) {
    unsigned char tail[64];
    Carry cy = {0, 0, 0, 0};
    const __m512i lo_tab =
        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)nibble_lo));
    const __m512i hi_tab =
        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)nibble_hi));
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i vq = _mm512_set1_epi8('"'), vb = _mm512_set1_epi8('\\');
    const __m512i vn = _mm512_set1_epi8('\n');
    const __m512i vcolon = _mm512_set1_epi8(':'), vcomma = _mm512_set1_epi8(',');
    const __m512i mws = _mm512_set1_epi8((char)NB_WS), mnum = _mm512_set1_epi8(NB_NUM);
    const __m512i mtok = _mm512_set1_epi8(NB_TOK), vspace = _mm512_set1_epi8(0x20);
    for (Py_ssize_t k = 0; k < nwords; k++) {
        const __m512i v = _mm512_loadu_si512((const void *)chunk_at(s, n, k, tail));
        const __m512i c = _mm512_and_si512(
            _mm512_shuffle_epi8(lo_tab, _mm512_and_si512(v, low4)),
            _mm512_shuffle_epi8(hi_tab, _mm512_and_si512(_mm512_srli_epi16(v, 4), low4)));
        const uint64_t bs = _mm512_cmpeq_epi8_mask(v, vb);
        const uint64_t q = unescaped_quotes(_mm512_cmpeq_epi8_mask(v, vq), bs, &cy);
        const uint64_t inside = CLMUL_PARITY(q) ^ cy.inside;
        out[k] = structurals(q, inside, bs, _mm512_cmpeq_epi8_mask(v, vn),
                             _mm512_test_epi8_mask(c, mws), _mm512_test_epi8_mask(c, mnum),
                             _mm512_test_epi8_mask(c, mtok),
                             _mm512_cmpeq_epi8_mask(v, vcolon) | _mm512_cmpeq_epi8_mask(v, vcomma),
                             _mm512_cmplt_epu8_mask(v, vspace), &cy);
    }
}
#endif

typedef void (*Stage1)(const unsigned char *, Py_ssize_t, Py_ssize_t, uint64_t *);

typedef struct {
    const char *name;
    Stage1 fn;
    int usable;
} Stage1Choice;

static Stage1Choice stage1_choices[] = {
    {"portable", stage1_base, 1},
#ifdef AUGER_X86
    {"ssse3", stage1_ssse3, 0},
    {"avx2", stage1_avx2, 0},
    {"avx512", stage1_avx512, 0},
#endif
};

#define N_STAGE1 ((int)(sizeof stage1_choices / sizeof stage1_choices[0]))

/* the fastest the CPU has, set when the module loads; NULL: the reference walk alone (the
 * portable variant costs more than the walk saves: it is there for tests and other CPUs) */
static Stage1 stage1 = NULL;

static void pick_stage1(void) {
#ifdef AUGER_X86
    __builtin_cpu_init();
    int pclmul = __builtin_cpu_supports("pclmul");
    stage1_choices[1].usable = __builtin_cpu_supports("ssse3");
    stage1_choices[2].usable = pclmul && __builtin_cpu_supports("avx2");
    stage1_choices[3].usable =
        pclmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
    for (int i = 1; i < N_STAGE1; i++)
        if (stage1_choices[i].usable) stage1 = stage1_choices[i].fn;
}

/* stage 2's place in the structural mask: word w, its bits not yet visited */
typedef struct {
    const uint64_t *bits;
    Py_ssize_t w;
    uint64_t cur;
} Cursor;

static inline Py_ssize_t next_pos(Cursor *c) {
    while (c->cur == 0) c->cur = c->bits[++c->w];
    const Py_ssize_t pos = (c->w << 6) + __builtin_ctzll(c->cur);
    c->cur &= c->cur - 1;
    return pos;
}

/* go on from pos (structural or not) */
static inline void seek_pos(Cursor *c, Py_ssize_t pos) {
    c->w = pos >> 6;
    c->cur = c->bits[c->w] & (~(uint64_t)0 << (pos & 63));
}

/* the length of the literal true, false, null, NaN or Infinity at t, whole (no token
 * character after it); 0 if there is none. Compares stop at the first difference, so they
 * never pass the line break that ends the input stage 2 sees. */
static inline Py_ssize_t literal_len(const unsigned char *t) {
    const char *lit;
    Py_ssize_t len;
    switch (t[0]) {
    case 't': lit = "true", len = 4; break;
    case 'f': lit = "false", len = 5; break;
    case 'n': lit = "null", len = 4; break;
    case 'N': lit = "NaN", len = 3; break;
    case 'I': lit = "Infinity", len = 8; break;
    default: return 0;
    }
    for (Py_ssize_t i = 1; i < len; i++)
        if (t[i] != (unsigned char)lit[i]) return 0;
    return token_char[t[len]] ? 0 : len;
}

/* match_key() for the fast path: most names are not wanted, and most of those have a length
 * no wanted key has; the case-blind compare goes by a table instead of calling tolower() */
static inline int fast_match(const Walk *w, const unsigned char *k, Py_ssize_t len) {
    if (!w->maybe[name_hash(w->fold, k, len)]) return -1;
    if (len < 64 ? !(w->short_lens >> len & 1) : !w->long_keys) return -1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* a name of up to 8 bytes at once: the first byte that differs is the lowest one set */
    const int whole = len <= 8 && w->s + w->n - k >= 8;
    uint64_t kw = 0;
    if (whole) {
        memcpy(&kw, k, 8);
        if (len < 8) kw &= ((uint64_t)1 << (8 * len)) - 1;
    }
#else
    const int whole = 0;
    const uint64_t kw = 0;
#endif
    for (Py_ssize_t i = 0; i < w->nkeys; i++) {
        if (w->keylens[i] != len) continue;
        const unsigned char *want = (const unsigned char *)w->keys[i];
        Py_ssize_t j = 0; /* names are short: a call to memcmp costs more than this */
        if (whole) {
            const uint64_t x = kw ^ w->key8[i];
            if (x == 0) return (int)i;
            j = __builtin_ctzll(x) >> 3;
        } else {
            while (j < len && k[j] == want[j]) j++;
            if (j == len) return (int)i;
        }
        while (j < len && w->fold[k[j]] == w->fold[want[j]]) j++;
        if (j == len) return -2;
    }
    return -1;
}

/* past the closing quote of the string opened before the cursor; -1: hand over */
static inline Py_ssize_t fast_string(const unsigned char *s, Cursor *c) {
    Py_ssize_t e;
    /* every backslash inside a string is a position: the byte after each escaping one must
     * make a strict JSON escape (anything else is the reference walk's to judge), and an
     * escaped backslash is skipped. The string ends before the input's last line break, so
     * the bytes looked at are inside the input. */
    while (s[e = next_pos(c)] == '\\') {
        const unsigned char x = s[e + 1];
        if (!escape_ok[x]) return -1;
        if (x == '\\' && next_pos(c) != e + 1) return -1;
        if (x == 'u' && !(isxdigit(s[e + 2]) && isxdigit(s[e + 3]) && isxdigit(s[e + 4]) &&
                          isxdigit(s[e + 5])))
            return -1;
    }
    /* a raw control character inside the string is a position too: hand over */
    return s[e] == '"' ? e + 1 : -1;
}

/* past the bracket closing the one opened before the cursor; -1: hand over. Like the
 * reference, it counts brackets of either kind and lets commas and colons be anywhere. */
static Py_ssize_t fast_nested(const unsigned char *s, Cursor *c) {
    Py_ssize_t depth = 1;
    for (;;) {
        const Py_ssize_t t = next_pos(c);
        const unsigned char ch = s[t];
        switch (ch) {
        case '{':
        case '[': depth++; break;
        case '}':
        case ']':
            if (--depth == 0) return t + 1;
            break;
        case ',':
        case ':': break;
        case '"':
            if (fast_string(s, c) < 0) return -1;
            break;
        default:
            /* a token's first character (a letter after a token character is part of a
             * token with letters: not a number); anything else is not JSON */
            if (!token_char[ch] || token_char[s[t - 1]]) return -1;
            if (!number_start[ch]) {
                const Py_ssize_t len = literal_len(s + t);
                if (len == 0) return -1;
                seek_pos(c, t + len);
            }
        }
    }
}

enum { F_DONE = 0, F_HAND_OVER = 1, F_NOMEM = 2 };

/* ,"name":value (no comma before the first member), room made once */
static inline int out_member(Out *o, int comma, const unsigned char *key, Py_ssize_t klen,
                             const unsigned char *val, Py_ssize_t vlen) {
    const Py_ssize_t need = 2 + klen + vlen;
    if (o->len + need > o->cap) {
        Py_ssize_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + need) cap *= 2;
        char *p = (char *)realloc(o->p, (size_t)cap);
        if (p == NULL) return -1;
        o->p = p;
        o->cap = cap;
    }
    char *d = o->p + o->len;
    if (comma) *d++ = ',';
    memcpy(d, key, (size_t)klen);
    d += klen;
    *d++ = ':';
    memcpy(d, val, (size_t)vlen);
    o->len = d + vlen - o->p;
    return 0;
}

/* The object whose '{' is the last position visited, as project_object() would cut it. */
static int fast_object(const Walk *w, Cursor *c, Out *out, Py_ssize_t *next) {
    const unsigned char *s = w->s;
    int members = 0;
    if (out_put(out, "{", 1) < 0) return F_NOMEM;
    Py_ssize_t t = next_pos(c);
    unsigned char ch = s[t];
    if (ch != '}') {
        for (;;) {
            if (ch != '"') return F_HAND_OVER;
            const Py_ssize_t k0 = t, k1 = next_pos(c);
            if (s[k1] != '"') return F_HAND_OVER; /* an escape or a line break in the name */
            const int which = fast_match(w, s + k0 + 1, k1 - k0 - 1);
            if (which == -2) return F_HAND_OVER;
            /* the colon, left out of the mask when right after the quote (a comma there
             * would be too) */
            if (s[k1 + 1] != ':' && (s[k1 + 1] == ',' || s[next_pos(c)] != ':'))
                return F_HAND_OVER;
            const Py_ssize_t v = next_pos(c);
            Py_ssize_t vend;
            ch = s[v];
            if (ch == '"') {
                vend = fast_string(s, c);
                if (vend >= 0 && (s[vend] == ',' || s[vend] == ':')) {
                    /* a comma or colon right after the closing quote: not in the mask */
                    if (s[vend] == ':') return F_HAND_OVER;
                    if (which >= 0 &&
                        out_member(out, members++, s + k0, k1 + 1 - k0, s + v, vend - v) < 0)
                        return F_NOMEM;
                    t = next_pos(c);
                    ch = s[t];
                    continue;
                }
            } else if (ch == '{' || ch == '[') {
                vend = fast_nested(s, c);
            } else if (number_start[ch]) {
                vend = v + 1; /* its end: before the whitespace ahead of the next position */
            } else {
                const Py_ssize_t len = literal_len(s + v);
                vend = len ? v + len : -1;
                if (len) seek_pos(c, vend);
            }
            if (vend < 0) return F_HAND_OVER;
            t = next_pos(c);
            ch = s[t];
            if (ch != ',' && ch != '}') return F_HAND_OVER;
            if (which >= 0) {
                if (number_start[s[v]]) {
                    vend = t;
                    while (is_ws(s[vend - 1])) vend--;
                }
                if (out_member(out, members++, s + k0, k1 + 1 - k0, s + v, vend - v) < 0)
                    return F_NOMEM;
            }
            if (ch == '}') break;
            t = next_pos(c);
            ch = s[t];
        }
    }
    *next = t + 1;
    return out_put(out, "}\n", 2) < 0 ? F_NOMEM : F_DONE;
}

/* The objects starting before the input's last line break, by the fast path with the
 * reference walk taking those it hands over. Returns R_DONE with *p after the last object
 * it took (the reference walk goes on from there), R_FAIL when the reference walk refused
 * one (it will again, from *p), or R_NOMEM. */
static int fast_objects(Walk *w, Stage1 st1, Out *out, Py_ssize_t *p, Py_ssize_t *records) {
    const unsigned char *s = w->s;
    Py_ssize_t last_nl = w->n - 1;
    while (last_nl >= 0 && s[last_nl] != '\n') last_nl--;
    if (last_nl < 0) return R_DONE;
    const Py_ssize_t nwords = last_nl / 64 + 1;
    uint64_t *bits = (uint64_t *)malloc((size_t)(nwords + 1) * sizeof(uint64_t));
    if (bits == NULL) return R_NOMEM;
    st1(s, w->n, nwords, bits);
    bits[nwords] = 1; /* past the last line break: never reached, but a stop all the same */
    Cursor c = {bits, 0, bits[0]};
    int status = R_DONE;
    for (;;) {
        const Py_ssize_t t = next_pos(&c);
        if (t >= last_nl) break;
        if (s[t] == '\n') continue;
        if (s[t] != '{') break; /* the reference walk says what it is */
        const Py_ssize_t mark = out->len;
        Py_ssize_t next = 0;
        int r = fast_object(w, &c, out, &next);
        if (r == F_NOMEM) {
            status = R_NOMEM;
            break;
        }
        if (r == F_HAND_OVER) {
            out->len = mark;
            r = project_object(w, t, out, &next);
            if (r != R_DONE) {
                out->len = mark;
                if (r == R_NOMEM) status = R_NOMEM;
                break;
            }
            seek_pos(&c, next);
        }
        (*records)++;
        *p = next;
    }
    free(bits);
    return status;
}

static PyObject *run_project(PyObject *args, PyObject *kwargs, int fast) {
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
    w.key8 = (uint64_t *)calloc((size_t)(w.nkeys ? w.nkeys : 1), sizeof(uint64_t));
    PyObject *result = NULL;
    if (w.keys == NULL || w.keylens == NULL || w.key8 == NULL) {
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
        memcpy(&w.key8[i], w.keys[i], (size_t)(w.keylens[i] < 8 ? w.keylens[i] : 8));
        if (w.keylens[i] < 64)
            w.short_lens |= (uint64_t)1 << w.keylens[i];
        else
            w.long_keys = 1;
    }
    for (int c = 0; c < 256; c++) w.fold[c] = (unsigned char)tolower(c);
    for (Py_ssize_t i = 0; i < w.nkeys; i++) {
        /* as name_hash() sees the key between its quotes */
        const unsigned char last = w.keylens[i] ? (unsigned char)w.keys[i][w.keylens[i] - 1] : '"';
        w.maybe[(w.fold[last] + 37u * (unsigned)w.keylens[i]) & 255u] = 1;
    }
    Out out = {NULL, 0, 0};
    Py_ssize_t consumed = 0, records = 0;
    int status = R_DONE;
    Stage1 st1 = stage1;
    Py_BEGIN_ALLOW_THREADS;
    Py_ssize_t p = 0;
    if (fast && st1 != NULL && fast_objects(&w, st1, &out, &p, &records) == R_NOMEM)
        status = R_NOMEM;
    consumed = p;
    while (status == R_DONE && p < w.n) {
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
    free(w.key8);
    PyBuffer_Release(&data);
    return result;
}

static PyObject *jsonscan_project(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    return run_project(args, kwargs, 1);
}

static PyObject *jsonscan_project_reference(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    return run_project(args, kwargs, 0);
}

static PyObject *jsonscan_stage1_variants(PyObject *self, PyObject *unused) {
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

static PyObject *jsonscan_use_stage1(PyObject *self, PyObject *arg) {
    (void)self;
    const char *want = PyUnicode_AsUTF8(arg);
    if (want == NULL) return NULL;
    for (int i = 0; i < N_STAGE1; i++) {
        if (stage1_choices[i].usable && strcmp(stage1_choices[i].name, want) == 0) {
            stage1 = stage1_choices[i].fn;
            Py_RETURN_NONE;
        }
    }
    PyErr_Format(PyExc_ValueError, "no stage 1 variant %R on this CPU", arg);
    return NULL;
}

static PyMethodDef methods[] = {
    {"project", (PyCFunction)(void (*)(void))jsonscan_project, METH_VARARGS | METH_KEYWORDS,
     "project(data, final, keys) -> (fallback_reason, consumed, records, projected)"},
    {"project_reference", (PyCFunction)(void (*)(void))jsonscan_project_reference,
     METH_VARARGS | METH_KEYWORDS,
     "project() by the byte-at-a-time walk alone (for tests and benchmarks)."},
    {"stage1_variants", jsonscan_stage1_variants, METH_NOARGS,
     "The fast path's stage 1 variants this CPU runs, slowest first (the last is in use, but "
     "'portable' alone: project() then walks byte by byte unless told to use it)."},
    {"use_stage1", jsonscan_use_stage1, METH_O,
     "Use the named stage 1 variant from now on (for tests and benchmarks)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_jsonscan",
    "Cut newline-delimited JSON objects down to the wanted top-level members.", -1, methods,
};

PyMODINIT_FUNC PyInit__jsonscan(void) {
    const char *chars = "0123456789+-.eEtrufalsnNIiy";
    for (const char *c = chars; *c; c++) token_char[(unsigned char)*c] = 1;
    string_stop['"'] = string_stop['\\'] = 1;
    for (int c = 0; c < 0x20; c++) string_stop[c] = 1; /* the line break among them */
    for (const char *c = "\"\\/bfnrtu"; *c; c++) escape_ok[(unsigned char)*c] = 1;
    for (int c = 0; c < 256; c++) {
        byte_class[c] = (unsigned char)((is_ws((unsigned char)c) ? C_WS : 0) |
                                        (token_char[c] ? C_TOK : 0) |
                                        (c == '"' ? C_QUOTE : 0) | (c == '\\' ? C_BSLASH : 0) |
                                        (c == '\n' ? C_NL : 0) |
                                        (c == ':' || c == ',' ? C_PUNCT : 0) |
                                        (c < 0x20 ? C_CTRL : 0));
        number_start[c] = (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    }
    for (const char *c = "0123456789+-.eE"; *c; c++) byte_class[(unsigned char)*c] |= C_NUM;
    pick_stage1();
    return PyModule_Create(&module);
}
