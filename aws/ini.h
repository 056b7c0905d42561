/*
 * ini.h - the shared AWS files in botocore's INI dialect (internal to aws/).
 *
 * A file is parsed into entries of (kind of section, section name, key,
 * value); keys are lower-case, nested settings are "parent.child". Kinds:
 * in the credentials file every section is a profile; in the config file
 * `[profile x]` and `[default]` are profiles, `[services x]` and
 * `[sso-session x]` their own kinds, anything else EL_INI_OTHER.
 *
 * Ownership: an el_ini owns its strings; el_ini_clear wipes the values (they
 * may be secrets) and frees everything. Single-threaded.
 */
#ifndef EL_AWS_INI_H
#define EL_AWS_INI_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "common/error.h"

typedef enum el_ini_kind {
    EL_INI_PROFILE,
    EL_INI_SERVICES,
    EL_INI_SSO_SESSION,
    EL_INI_OTHER
} el_ini_kind;

typedef struct el_ini_entry {
    el_ini_kind kind;
    char *section; /* profile name for EL_INI_PROFILE */
    char *key;     /* lower-case; "parent.child" for nested settings */
    char *value;
} el_ini_entry;

typedef struct el_ini {
    el_ini_entry *v;
    size_t n, cap;
    char *path;     /* as resolved (after ~ expansion) */
    bool present;   /* the file existed and was read */
    bool exposed;   /* readable by group or others */
    unsigned mode;
} el_ini;


/* Reads and parses path into f (zeroed by the caller). A missing file is
 * not an error (f->present stays false, f->path is set); an unreadable or
 * malformed one is EL_ECONFIG with diag naming the file and line (never its
 * text). config_file selects the config file's section names. */
el_err el_ini_load(el_ini *f, const char *path, bool config_file, el_diag *diag) EL_MUST_USE;

/* The last value set for key in the section (later lines override), NULL
 * when none. Borrowed from f. */
const char *el_ini_get(const el_ini *f, el_ini_kind kind, const char *section,
                       const char *key);

/* True when the file has a section of that kind and name. */
bool el_ini_has_section(const el_ini *f, el_ini_kind kind, const char *section);

/* Wipes and frees everything; f is zeroed. */
void el_ini_clear(el_ini *f);

#endif
