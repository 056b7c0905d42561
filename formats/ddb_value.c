/*
 * ddb_value.c - JSON strings, DynamoDB numbers, base64, epoch, booleans.
 *
 * DESIGN: these run once per attribute of every item, so they append into a
 * caller's buffer and never allocate on their own. The number check follows
 * DynamoDB's documented limits rather than any float type: a value is kept
 * as the exact decimal text the database wrote.
 */
#include "formats/ddb_value.h"

#include <stdint.h>  /* uint64_t */
#include <string.h>  /* memcpy, strlen */

/* SWAR (8 bytes a step) byte tests, exact as to whether any byte of the word
 * matches: a byte below 0x20, a '"', a '\\'. */
#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

static inline uint64_t has_zero_byte(uint64_t v)
{
    return (v - ONES) & ~v & HIGHS;
}

static inline uint64_t needs_escape8(uint64_t v)
{
    return ((v - ONES * 0x20) & ~v & HIGHS) |        /* a byte < 0x20 */
           has_zero_byte(v ^ (ONES * (uint8_t)'"')) |
           has_zero_byte(v ^ (ONES * (uint8_t)'\\'));
}

/* Length of the run at the start of s[0..len) that JSON takes as it is. */
static size_t plain_prefix(const char *s, size_t len)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v;
        memcpy(&v, s + i, 8);
        if (needs_escape8(v))
            break;
    }
    while (i < len && (unsigned char)s[i] >= 0x20 && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

el_err el_json_put_string(el_buf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    /* Worst case every byte becomes \u00XX: reserve once, then write. */
    el_err err = el_buf_reserve(out, len + 2);
    if (err)
        return err;
    out->data[out->len++] = '"';
    /* Most values need no escape at all: copy them into the room just
     * reserved, without a call per byte run. */
    size_t i = plain_prefix(s, len);
    if (i == len) {
        if (len)
            memcpy(out->data + out->len, s, len);
        out->len += len;
        out->data[out->len++] = '"';
        out->data[out->len] = '\0';
        return EL_OK;
    }
    size_t run = 0; /* start of the current run of bytes needing no escape */
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        err = el_buf_append(out, s + run, i - run);
        if (err)
            return err;
        char esc[6] = { '\\', 0, 0, 0, 0, 0 };
        size_t n = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
            esc[4] = hex[c >> 4]; esc[5] = hex[c & 15];
            n = 6;
        }
        err = el_buf_append(out, esc, n);
        if (err)
            return err;
        run = i + 1;
    }
    err = el_buf_append(out, s + run, len - run);
    if (!err)
        err = el_buf_putc(out, '"');
    return err;
}

el_err el_ddb_number_put(el_buf *out, const char *s, size_t len, size_t *size,
                         const char **why)
{
    size_t i = 0;
    if (len && (s[0] == '+' || s[0] == '-'))
        i++;
    size_t start = len && s[0] == '+' ? 1 : 0;
    size_t int_digits = 0, frac_digits = 0;
    long first_nz = -1, last_nz = -1; /* positions among all mantissa digits */
    long ndig = 0;
    long point_at = -1;               /* digits before the decimal point */
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, int_digits++, ndig++)
        if (s[i] != '0') {
            if (first_nz < 0)
                first_nz = ndig;
            last_nz = ndig;
        }
    point_at = ndig;
    if (i < len && s[i] == '.') {
        i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, frac_digits++, ndig++)
            if (s[i] != '0') {
                if (first_nz < 0)
                    first_nz = ndig;
                last_nz = ndig;
            }
    }
    if (int_digits + frac_digits == 0) {
        *why = "not a number";
        return EL_EREJECT;
    }
    long exp = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool neg = false;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            neg = s[i++] == '-';
        size_t ed = 0;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ed++)
            if (exp < 100000)
                exp = exp * 10 + (s[i] - '0');
        if (ed == 0) {
            *why = "not a number (exponent without digits)";
            return EL_EREJECT;
        }
        if (neg)
            exp = -exp;
    }
    if (i != len) {
        *why = "not a number";
        return EL_EREJECT;
    }
    size_t sig = 0;
    if (first_nz >= 0) {
        sig = (size_t)(last_nz - first_nz + 1);
        if (sig > 38) {
            *why = "more than 38 significant digits (DynamoDB's limit)";
            return EL_EREJECT;
        }
        /* value = 0.d1d2... x 10^(point_at - first_nz + exp) in scientific
         * terms: the leading digit's power of ten is below. */
        long mag = point_at - first_nz - 1 + exp;
        if (mag > 125) {
            *why = "magnitude above 9.99E+125 (DynamoDB's limit)";
            return EL_EREJECT;
        }
        if (mag < -130) {
            *why = "magnitude below 1E-130 (DynamoDB's limit)";
            return EL_EREJECT;
        }
    }
    /* DynamoDB stores numbers in about one byte per two significant digits
     * plus one. */
    *size = (sig + 1) / 2 + 1;
    return el_buf_append(out, s + start, len - start);
}

el_err el_base64_put(el_buf *out, const void *data, size_t len)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = data;
    size_t olen = (len + 2) / 3 * 4;
    el_err err = el_buf_reserve(out, olen);
    if (err)
        return err;
    char *o = out->data + out->len;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *o++ = tbl[v >> 18];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = tbl[(v >> 6) & 63];
        *o++ = tbl[v & 63];
    }
    if (i < len) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0);
        *o++ = tbl[v >> 18];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = i + 1 < len ? tbl[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    out->len += olen;
    out->data[out->len] = '\0';
    return EL_OK;
}

int64_t el_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    /* Howard Hinnant's days_from_civil. */
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

static bool digits(const char *s, size_t len, size_t *i, size_t n, int *out)
{
    int v = 0;
    for (size_t k = 0; k < n; k++) {
        if (*i >= len || s[*i] < '0' || s[*i] > '9')
            return false;
        v = v * 10 + (s[(*i)++] - '0');
    }
    *out = v;
    return true;
}

/* s[i..i+1] as a number, when both are digits; else -1. */
static inline int two_digits(const char *s, size_t i)
{
    unsigned a = (unsigned char)s[i] - '0', b = (unsigned char)s[i + 1] - '0';
    return a < 10 && b < 10 ? (int)(a * 10 + b) : -1;
}

/* The common shape, "YYYY-MM-DD HH:MM:SS" (or with 'T', or a final 'Z'),
 * in one step: false when s is not exactly that, or is out of range, so
 * that the general parser below decides (and says why). */
static bool epoch_fast(const char *s, size_t len, int64_t *out)
{
    if ((len != 19 && !(len == 20 && (s[19] == 'Z' || s[19] == 'z'))) || s[4] != '-' ||
        s[7] != '-' || (s[10] != ' ' && s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':')
        return false;
    int yh = two_digits(s, 0), yl = two_digits(s, 2), mo = two_digits(s, 5),
        d = two_digits(s, 8), h = two_digits(s, 11), mi = two_digits(s, 14),
        sec = two_digits(s, 17);
    if ((yh | yl | mo | d | h | mi | sec) < 0)
        return false;
    int y = yh * 100 + yl;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
        sec > 60)
        return false;
    *out = el_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + (int64_t)h * 3600 +
           mi * 60 + sec;
    return true;
}

bool el_epoch_parse(const char *s, size_t len, int64_t *out, const char **why)
{
    size_t i = 0;
    *why = "not a date or timestamp (expected YYYY-MM-DD[ HH:MM:SS[.f]][Z|+HH:MM])";
    if (epoch_fast(s, len, out))
        return true;
    /* A bare integer is epoch seconds already. */
    {
        size_t k = (len && s[0] == '-') ? 1 : 0;
        size_t d0 = k;
        int64_t v = 0;
        while (k < len && s[k] >= '0' && s[k] <= '9' && k - d0 < 18)
            v = v * 10 + (s[k++] - '0');
        if (k == len && k > d0) {
            *out = s[0] == '-' ? -v : v;
            return true;
        }
    }
    int y, mo, d, h = 0, mi = 0, sec = 0;
    bool neg_year = false;
    if (i < len && s[i] == '-') {
        neg_year = true;
        i++;
    }
    if (!digits(s, len, &i, 4, &y))
        return false;
    while (i < len && s[i] >= '0' && s[i] <= '9' && y < 100000)
        y = y * 10 + (s[i++] - '0');
    if (i >= len || s[i++] != '-' || !digits(s, len, &i, 2, &mo) || i >= len ||
        s[i++] != '-' || !digits(s, len, &i, 2, &d))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(neg_year ? -(int64_t)y : y, mo)) {
        *why = "date out of range";
        return false;
    }
    if (i < len && (s[i] == ' ' || s[i] == 'T' || s[i] == 't')) {
        i++;
        if (!digits(s, len, &i, 2, &h) || i >= len || s[i++] != ':' ||
            !digits(s, len, &i, 2, &mi))
            return false;
        if (i < len && s[i] == ':') {
            i++;
            if (!digits(s, len, &i, 2, &sec))
                return false;
            if (i < len && (s[i] == '.' || s[i] == ',')) {
                i++;
                size_t f0 = i;
                while (i < len && s[i] >= '0' && s[i] <= '9')
                    i++;
                if (i == f0)
                    return false;
            }
        }
        if (h > 24 || mi > 59 || sec > 60 || (h == 24 && (mi || sec))) {
            *why = "time out of range";
            return false;
        }
    }
    int64_t off = 0;
    if (i < len && s[i] == ' ')
        i++; /* PostgreSQL writes "2024-06-20 16:13:20+00"; some tools add a space */
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < len && (s[i] == '+' || s[i] == '-')) {
        int sign = s[i++] == '-' ? -1 : 1;
        int oh, om = 0, os = 0;
        if (!digits(s, len, &i, 2, &oh))
            return false;
        if (i < len && s[i] == ':')
            i++;
        if (i < len && s[i] >= '0' && s[i] <= '9') {
            if (!digits(s, len, &i, 2, &om))
                return false;
            if (i < len && s[i] == ':') {
                i++;
                if (!digits(s, len, &i, 2, &os))
                    return false;
            }
        }
        if (oh > 23 || om > 59 || os > 59) {
            *why = "time zone offset out of range";
            return false;
        }
        off = sign * ((int64_t)oh * 3600 + om * 60 + os);
    }
    if (i != len)
        return false;
    int64_t days = el_days_from_civil(neg_year ? -(int64_t)y : y, (unsigned)mo, (unsigned)d);
    int64_t t = days * 86400 + (int64_t)h * 3600 + mi * 60 + sec - off;
    *out = t;
    return true;
}

static bool ieq(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return false;
    }
    return true;
}

int el_bool_parse(const char *s, size_t len)
{
    static const char *const yes[] = { "true", "t", "yes", "y", "on", "1" };
    static const char *const no[] = { "false", "f", "no", "n", "off", "0" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (ieq(s, len, yes[i]))
            return 1;
        if (ieq(s, len, no[i]))
            return 0;
    }
    /* MySQL bit(1) dumped as a raw byte */
    if (len == 1 && (s[0] == '\1' || s[0] == '\0'))
        return s[0] == '\1';
    return -1;
}
