/*
 * table_settings.c - create-table's settings from flags and from the
 * mapping's "create_table", merged and checked.
 *
 * DESIGN: a flag and a key of the file go through the same parser of
 * values (value_of), so "40000" means the same wherever it is written and
 * a bad value is refused in the same words; only the name in the message
 * differs. The name is kept per setting (from_flags), because a check that
 * fails after the merge must say where each of the settings it names came
 * from: "--write-units is for a PROVISIONED table, and
 * create_table.billing_mode makes this one PAY_PER_REQUEST".
 */
#include "pipeline/rows/table_settings.h"

#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free, realloc */
#include <string.h>   /* strcmp, strchr, strdup, strncmp */

/* How each setting is named: as a flag, and as a key of "create_table". */
static const struct {
    const char *flag, *key;
} names[EL_TS_NFIELDS] = {
    [EL_TS_BILLING_MODE] = { "--billing-mode", "billing_mode" },
    [EL_TS_WRITE_UNITS] = { "--write-units", "write_units" },
    [EL_TS_READ_UNITS] = { "--read-units", "read_units" },
    [EL_TS_WARM] = { "--warm-throughput", "warm_throughput" },
    [EL_TS_MAX_WRITE] = { "--max-write-units", "max_write_units" },
    [EL_TS_MAX_READ] = { "--max-read-units", "max_read_units" },
    [EL_TS_TABLE_CLASS] = { "--table-class", "table_class" },
    [EL_TS_DELETION_PROTECTION] = { "--deletion-protection", "deletion_protection" },
    [EL_TS_TAG] = { "--tag", "tags" },
    [EL_TS_PROJECTION] = { "--projection", "projection" },
};

#define BIT(f) (1u << (f))
#define THROUGHPUT_BITS (BIT(EL_TS_WRITE_UNITS) | BIT(EL_TS_READ_UNITS) | BIT(EL_TS_WARM) | \
                         BIT(EL_TS_MAX_WRITE) | BIT(EL_TS_MAX_READ))

el_table_settings *el_table_settings_new(void)
{
    return calloc(1, sizeof(el_table_settings));
}

static void free_tags(el_table_settings *s)
{
    for (size_t i = 0; i < s->ntags; i++) {
        free(s->tags[i].key);
        free(s->tags[i].value);
    }
    free(s->tags);
    s->tags = NULL;
    s->ntags = 0;
}

void el_table_settings_free(el_table_settings *s)
{
    if (!s)
        return;
    free(s->billing_mode);
    free(s->table_class);
    free(s->projection);
    free_tags(s);
    free(s);
}

/* The name of field f as it was given: the flag, or the file's key
 * ("create_table.write_units", "create_table.index.write_units" for the
 * index's own). */
static const char *name_of(const el_table_settings *s, el_ts_field f, bool index, char *buf,
                           size_t cap)
{
    if (!index && (s->from_flags & BIT(f)))
        return names[f].flag;
    snprintf(buf, cap, "create_table.%s%s", index ? "index." : "", names[f].key);
    return buf;
}

/* ---- values ---- */

/* A whole number of units, 1 to EL_TS_MAX_UNITS. */
static bool parse_units(const char *t, uint64_t *out)
{
    uint64_t v = 0;
    if (!t || !*t)
        return false;
    for (; *t; t++) {
        if (*t < '0' || *t > '9' || v > EL_TS_MAX_UNITS / 10)
            return false;
        v = v * 10 + (uint64_t)(*t - '0');
    }
    if (v < 1 || v > EL_TS_MAX_UNITS)
        return false;
    *out = v;
    return true;
}

static bool one_of(const char *t, const char *a, const char *b)
{
    return t && (strcmp(t, a) == 0 || strcmp(t, b) == 0);
}

static el_err set_string(char **slot, const char *v, el_diag *diag)
{
    char *d = strdup(v);
    if (!d)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    free(*slot);
    *slot = d;
    return EL_OK;
}

/* Characters of UTF-8 text: the bytes that do not continue one. */
static size_t utf8_chars(const char *t)
{
    size_t n = 0;
    for (; *t; t++)
        n += ((unsigned char)*t & 0xC0) != 0x80;
    return n;
}

static el_err add_tag(el_table_settings *s, const char *key, const char *value,
                      const char *name, el_diag *diag)
{
    size_t klen = utf8_chars(key);
    if (klen < 1 || klen > EL_TS_TAG_KEY_MAX)
        return el_diag_set(diag, EL_EUSAGE, "%s: a tag key is 1 to %d characters, not %zu",
                           name, EL_TS_TAG_KEY_MAX, klen);
    if (strncmp(key, "aws:", 4) == 0)
        return el_diag_set(diag, EL_EUSAGE, "%s: tag key '%s' begins with aws:, which AWS "
                           "keeps for its own tags", name, key);
    if (utf8_chars(value) > EL_TS_TAG_VALUE_MAX)
        return el_diag_set(diag, EL_EUSAGE, "%s: the value of tag '%s' is over %d characters",
                           name, key, EL_TS_TAG_VALUE_MAX);
    for (size_t i = 0; i < s->ntags; i++)
        if (strcmp(s->tags[i].key, key) == 0)
            return set_string(&s->tags[i].value, value, diag);
    if (s->ntags >= EL_TS_MAX_TAGS)
        return el_diag_set(diag, EL_EUSAGE, "%s: a table takes at most %d tags", name,
                           EL_TS_MAX_TAGS);
    el_ddb_tag *grown = realloc(s->tags, (s->ntags + 1) * sizeof *grown);
    if (!grown)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    s->tags = grown;
    el_ddb_tag *t = &s->tags[s->ntags];
    t->key = strdup(key);
    t->value = strdup(value);
    if (!t->key || !t->value) {
        free(t->key);
        free(t->value);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    s->ntags++;
    return EL_OK;
}

/* "WRITE[,READ]"; *w and *r unchanged unless it is good. */
static bool parse_warm(const char *t, uint64_t *w, uint64_t *r)
{
    const char *comma = strchr(t, ',');
    char first[32];
    size_t n = comma ? (size_t)(comma - t) : strlen(t);
    uint64_t write = 0, read = 0;
    if (n >= sizeof first)
        return false;
    memcpy(first, t, n);
    first[n] = '\0';
    if (!parse_units(first, &write) || (comma && !parse_units(comma + 1, &read)))
        return false;
    *w = write;
    *r = read;
    return true;
}

/* The figure of field f in tp, NULL when f is not one figure (the warm
 * pair, and the settings that are no throughput). */
static uint64_t *units_slot(el_ddb_throughput *tp, el_ts_field f)
{
    switch (f) {
    case EL_TS_WRITE_UNITS: return &tp->write_units;
    case EL_TS_READ_UNITS: return &tp->read_units;
    case EL_TS_MAX_WRITE: return &tp->max_write;
    case EL_TS_MAX_READ: return &tp->max_read;
    default: return NULL;
    }
}

/*
 * Sets f from text into s (the table's figure), named `name` in messages.
 * The values of every field but the tags and the warm throughput's pair
 * (which each form gives its own way) are parsed here.
 */
static el_err set_value(el_table_settings *s, el_ts_field f, const char *text,
                        const char *name, el_diag *diag)
{
    el_err err = EL_OK;
    uint64_t *slot = units_slot(&s->table, f);
    if (slot) {
        if (!parse_units(text, slot))
            return el_diag_set(diag, EL_EUSAGE, "%s takes a whole number of units a second "
                               "(1 to 2^53), not '%s'", name, text ? text : "");
    } else if (f == EL_TS_BILLING_MODE) {
        if (!one_of(text, "PAY_PER_REQUEST", "PROVISIONED"))
            return el_diag_set(diag, EL_EUSAGE, "%s must be PAY_PER_REQUEST or PROVISIONED, "
                               "not '%s'", name, text ? text : "");
        err = set_string(&s->billing_mode, text, diag);
    } else if (f == EL_TS_TABLE_CLASS) {
        if (!one_of(text, "STANDARD", "STANDARD_INFREQUENT_ACCESS"))
            return el_diag_set(diag, EL_EUSAGE, "%s must be STANDARD or "
                               "STANDARD_INFREQUENT_ACCESS, not '%s'", name, text ? text : "");
        err = set_string(&s->table_class, text, diag);
    } else if (f == EL_TS_PROJECTION) {
        if (!one_of(text, "ALL", "KEYS_ONLY"))
            return el_diag_set(diag, EL_EUSAGE, "%s must be ALL or KEYS_ONLY, not '%s'", name,
                               text ? text : "");
        err = set_string(&s->projection, text, diag);
    } else if (f == EL_TS_DELETION_PROTECTION) {
        if (!text || !one_of(text, "true", "false"))
            return el_diag_set(diag, EL_EUSAGE, "%s must be true or false", name);
        s->deletion_protection = strcmp(text, "true") == 0;
    }
    if (!err)
        s->given |= BIT(f);
    return err;
}

el_err el_table_settings_set(el_table_settings *s, el_ts_field f, const char *text,
                             el_diag *diag)
{
    const char *name = names[f].flag;
    el_err err;
    if (f == EL_TS_TAG) {
        const char *eq = text ? strchr(text, '=') : NULL;
        if (!eq)
            return el_diag_set(diag, EL_EUSAGE, "--tag takes KEY=VALUE, not '%s'",
                               text ? text : "");
        char key[4 * EL_TS_TAG_KEY_MAX + 1];
        size_t n = (size_t)(eq - text);
        if (n >= sizeof key)
            n = sizeof key - 1; /* too long either way: add_tag says so */
        memcpy(key, text, n);
        key[n] = '\0';
        err = add_tag(s, key, eq + 1, name, diag);
    } else if (f == EL_TS_WARM) {
        if (!text || !parse_warm(text, &s->table.warm_write, &s->table.warm_read))
            return el_diag_set(diag, EL_EUSAGE, "--warm-throughput takes WRITE[,READ], whole "
                               "units a second (1 to 2^53), not '%s'", text ? text : "");
        err = EL_OK;
    } else {
        err = set_value(s, f, f == EL_TS_DELETION_PROTECTION ? "true" : text, name, diag);
    }
    if (err)
        return err;
    s->given |= BIT(f);
    s->from_flags |= BIT(f);
    return EL_OK;
}

/* ---- the mapping's "create_table" ---- */

/* A JSON value as set_value's text: a string as is, true/false; NULL for
 * anything else. */
static const char *json_text(yajl_val v)
{
    if (YAJL_IS_STRING(v))
        return YAJL_GET_STRING(v);
    if (YAJL_IS_TRUE(v))
        return "true";
    if (YAJL_IS_FALSE(v))
        return "false";
    return NULL;
}

static el_ts_field field_named(const char *key)
{
    for (int f = 0; f < EL_TS_NFIELDS; f++)
        if (strcmp(names[f].key, key) == 0)
            return (el_ts_field)f;
    return EL_TS_NFIELDS;
}

/* A JSON integer of units (1 to 2^53) into *slot, named `name` when it is
 * not one: "40000" (a string) and 4e4 are refused alike. */
static el_err units_from_json(uint64_t *slot, yajl_val v, const char *name, el_diag *diag)
{
    if (YAJL_IS_INTEGER(v) && parse_units(YAJL_GET_NUMBER(v), slot))
        return EL_OK;
    return el_diag_set(diag, EL_EUSAGE, "%s takes a whole number of units a second "
                       "(1 to 2^53)", name);
}

/* {"write": N, "read": N} into tp's warm figures. */
static el_err warm_from_json(el_ddb_throughput *tp, yajl_val v, const char *name,
                             el_diag *diag)
{
    if (!YAJL_IS_OBJECT(v) || v->u.object.len == 0)
        return el_diag_set(diag, EL_EUSAGE, "%s must be an object {\"write\": N, \"read\": N}",
                           name);
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *k = v->u.object.keys[i];
        uint64_t *slot = strcmp(k, "write") == 0 ? &tp->warm_write
                         : strcmp(k, "read") == 0 ? &tp->warm_read : NULL;
        if (!slot)
            return el_diag_set(diag, EL_EUSAGE, "%s has an unknown key \"%s\" (expected write, "
                               "read)", name, k);
        char member[128];
        snprintf(member, sizeof member, "%s.%s", name, k);
        el_err err = units_from_json(slot, v->u.object.values[i], member, diag);
        if (err)
            return err;
    }
    return EL_OK;
}

/* Is f a figure that the table and its index each have (the units, their
 * maximums, the warm throughput)? */
static bool is_throughput(el_ts_field f)
{
    return f < EL_TS_NFIELDS && (BIT(f) & THROUGHPUT_BITS);
}

/* The figure f (is_throughput) of tp from v, named `name` in messages. */
static el_err throughput_from_json(el_ddb_throughput *tp, el_ts_field f, yajl_val v,
                                   const char *name, el_diag *diag)
{
    if (f == EL_TS_WARM)
        return warm_from_json(tp, v, name, diag);
    return units_from_json(units_slot(tp, f), v, name, diag);
}

/* The "index" object: the index's own throughput figures. */
static el_err index_from_json(el_table_settings *s, yajl_val v, el_diag *diag)
{
    if (!YAJL_IS_OBJECT(v))
        return el_diag_set(diag, EL_EUSAGE, "create_table.index must be an object of the "
                           "index's own write_units, read_units, warm_throughput, "
                           "max_write_units, max_read_units");
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *k = v->u.object.keys[i];
        el_ts_field f = field_named(k);
        if (!is_throughput(f))
            return el_diag_set(diag, EL_EUSAGE, "create_table.index has an unknown key \"%s\" "
                               "(expected write_units, read_units, warm_throughput, "
                               "max_write_units, max_read_units)", k);
        char name[96];
        snprintf(name, sizeof name, "create_table.index.%s", k);
        el_err err = throughput_from_json(&s->index, f, v->u.object.values[i], name, diag);
        if (err)
            return err;
        s->index_given |= BIT(f);
    }
    return EL_OK;
}

static el_err tags_from_json(el_table_settings *s, yajl_val v, el_diag *diag)
{
    if (!YAJL_IS_OBJECT(v))
        return el_diag_set(diag, EL_EUSAGE, "create_table.tags must be an object "
                           "{\"KEY\": \"VALUE\", ...}");
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *value = YAJL_GET_STRING(v->u.object.values[i]);
        if (!value)
            return el_diag_set(diag, EL_EUSAGE, "create_table.tags: the value of tag '%s' "
                               "must be a string", v->u.object.keys[i]);
        el_err err = add_tag(s, v->u.object.keys[i], value, "create_table.tags", diag);
        if (err)
            return err;
    }
    if (v->u.object.len)
        s->given |= BIT(EL_TS_TAG);
    return EL_OK;
}

el_err el_table_settings_from_json(el_table_settings *s, yajl_val obj, el_diag *diag)
{
    if (!YAJL_IS_OBJECT(obj))
        return el_diag_set(diag, EL_EUSAGE, "\"create_table\" must be an object such as "
                           "{\"billing_mode\": \"PAY_PER_REQUEST\", \"warm_throughput\": "
                           "{\"write\": 40000}}");
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i];
        yajl_val v = obj->u.object.values[i];
        el_ts_field f = field_named(k);
        char name[96];
        snprintf(name, sizeof name, "create_table.%s", k);
        el_err err;
        if (strcmp(k, "index") == 0) {
            err = index_from_json(s, v, diag);
        } else if (f == EL_TS_TAG) {
            err = tags_from_json(s, v, diag);
        } else if (is_throughput(f)) {
            err = throughput_from_json(&s->table, f, v, name, diag);
            s->given |= BIT(f);
        } else if (f < EL_TS_NFIELDS) {
            err = set_value(s, f, json_text(v), name, diag);
        } else {
            err = el_diag_set(diag, EL_EUSAGE, "\"create_table\" has an unknown key \"%s\" "
                              "(expected billing_mode, write_units, read_units, "
                              "warm_throughput, max_write_units, max_read_units, table_class, "
                              "deletion_protection, tags, projection, index)", k);
        }
        if (err)
            return err;
    }
    return EL_OK;
}

/* ---- merge and check ---- */

el_err el_table_settings_merge(el_table_settings *into, const el_table_settings *over,
                               el_diag *diag)
{
    if (!over)
        return EL_OK;
    el_ddb_throughput over_table = over->table; /* units_slot's, which writes too */
    el_err err = EL_OK;
    for (int f = 0; !err && f < EL_TS_NFIELDS; f++) {
        if (!(over->given & BIT(f)))
            continue;
        uint64_t *to = units_slot(&into->table, (el_ts_field)f);
        if (to) {
            *to = *units_slot(&over_table, (el_ts_field)f);
            *units_slot(&into->index, (el_ts_field)f) = 0;
        }
        switch (f) {
        case EL_TS_WARM:
            into->table.warm_write = over->table.warm_write;
            into->table.warm_read = over->table.warm_read;
            into->index.warm_write = into->index.warm_read = 0;
            break;
        case EL_TS_BILLING_MODE: err = set_string(&into->billing_mode, over->billing_mode, diag); break;
        case EL_TS_TABLE_CLASS: err = set_string(&into->table_class, over->table_class, diag); break;
        case EL_TS_PROJECTION: err = set_string(&into->projection, over->projection, diag); break;
        case EL_TS_DELETION_PROTECTION: into->deletion_protection = over->deletion_protection; break;
        case EL_TS_TAG:
            for (size_t i = 0; !err && i < over->ntags; i++)
                err = add_tag(into, over->tags[i].key, over->tags[i].value,
                              names[EL_TS_TAG].flag, diag);
            break;
        default: break;
        }
        into->given |= BIT(f);
        into->index_given &= ~BIT(f);
        into->from_flags = (into->from_flags & ~BIT(f)) | (over->from_flags & BIT(f));
    }
    return err;
}

/* The first throughput field of mask that s gives (the table's figure, or
 * the index's own when index), EL_TS_NFIELDS when none. */
static el_ts_field first_given(const el_table_settings *s, unsigned mask, bool index)
{
    unsigned bits = (index ? s->index_given : s->given) & mask;
    for (int f = 0; f < EL_TS_NFIELDS; f++)
        if (bits & BIT(f))
            return (el_ts_field)f;
    return EL_TS_NFIELDS;
}

el_err el_table_settings_check(const el_table_settings *s, bool has_index, el_diag *diag)
{
    char a[96], b[96];
    bool provisioned = s->billing_mode && strcmp(s->billing_mode, "PROVISIONED") == 0;
    const char *mode = (s->given & BIT(EL_TS_BILLING_MODE))
                           ? name_of(s, EL_TS_BILLING_MODE, false, b, sizeof b)
                           : "the default";
    unsigned units = BIT(EL_TS_WRITE_UNITS) | BIT(EL_TS_READ_UNITS);
    unsigned maxes = BIT(EL_TS_MAX_WRITE) | BIT(EL_TS_MAX_READ);
    if (!has_index && s->index_given)
        return el_diag_set(diag, EL_EUSAGE, "%s gives the index its own throughput, but the "
                           "table gets no index (--no-index)",
                           name_of(s, first_given(s, THROUGHPUT_BITS, true), true, a, sizeof a));
    for (int index = 0; index < 2; index++) {
        el_ts_field f = first_given(s, provisioned ? maxes : units, index);
        if (f == EL_TS_NFIELDS)
            continue;
        const char *name = name_of(s, f, index, a, sizeof a);
        if (provisioned)
            return el_diag_set(diag, EL_EUSAGE, "%s is an on-demand table's maximum, but %s "
                               "makes this one PROVISIONED: its capacity is --write-units and "
                               "--read-units", name, mode);
        return el_diag_set(diag, EL_EUSAGE, "%s is a PROVISIONED table's capacity, but this "
                           "one is PAY_PER_REQUEST (%s): give --billing-mode PROVISIONED, or "
                           "%s N for an on-demand table's maximum", name, mode,
                           f == EL_TS_WRITE_UNITS ? "--max-write-units" : "--max-read-units");
    }
    if (provisioned && (!s->table.write_units || !s->table.read_units))
        return el_diag_set(diag, EL_EUSAGE, "%s PROVISIONED needs the table's capacity: "
                           "--write-units N and --read-units N (the index takes the same "
                           "unless create_table.index gives its own)", mode);
    return EL_OK;
}

/* The index's figure: its own when given, else the table's. */
static uint64_t or_table(uint64_t own, uint64_t table)
{
    return own ? own : table;
}

void el_table_settings_apply(const el_table_settings *s, el_create_table_opts *o)
{
    o->provisioned = s->billing_mode && strcmp(s->billing_mode, "PROVISIONED") == 0;
    o->table_tp = s->table;
    const el_ddb_throughput *t = &s->table, *i = &s->index;
    o->index_tp = (el_ddb_throughput){
        .write_units = or_table(i->write_units, t->write_units),
        .read_units = or_table(i->read_units, t->read_units),
        .max_write = or_table(i->max_write, t->max_write),
        .max_read = or_table(i->max_read, t->max_read),
    };
    /* the warm pair goes together: an index with its own warm figures does
     * not take half of the table's */
    bool own_warm = i->warm_write || i->warm_read;
    o->index_tp.warm_write = own_warm ? i->warm_write : t->warm_write;
    o->index_tp.warm_read = own_warm ? i->warm_read : t->warm_read;
    o->table_class = s->table_class;
    o->deletion_protection = s->deletion_protection;
    o->tags = s->tags;
    o->ntags = s->ntags;
    if (s->projection)
        o->projection = s->projection;
}
