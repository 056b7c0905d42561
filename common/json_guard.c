/*
 * json_guard.c - depth and size pre-check of JSON text, and the guarded
 * parse of a file the user wrote (see json_guard.h).
 *
 * DESIGN: one pass, constant memory: a depth counter incremented at '[' and
 * '{' and decremented at ']' and '}' outside strings (a backslash skips the
 * next byte inside a string), and a value counter that counts openers and
 * the separators ',' and the first value of a container. It is an
 * over-approximation used only as a limit, never as a parser.
 */
#include "common/json_guard.h"

#include <string.h> /* strchr */

el_err el_json_guard(const char *text, size_t len, size_t max_depth, size_t max_values,
                     el_diag *diag)
{
    size_t depth = 0, values = 1;
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
            continue;
        }
        switch (c) {
        case '"':
            in_string = 1;
            break;
        case '[':
        case '{':
            if (++depth > max_depth)
                return el_diag_set(diag, EL_ELIMIT, "JSON nested deeper than %zu levels",
                                   max_depth);
            values++;
            break;
        case ']':
        case '}':
            if (depth)
                depth--;
            break;
        case ',':
            values++;
            break;
        default:
            break;
        }
        if (max_values && values > max_values)
            return el_diag_set(diag, EL_ELIMIT, "JSON holds more than %zu values", max_values);
    }
    return EL_OK;
}

el_err el_json_tree_parse(const char *json, size_t len, size_t max_depth, size_t max_values,
                          const char *what, yajl_val *root, el_diag *diag)
{
    *root = NULL;
    el_diag g;
    el_diag_clear(&g);
    if (el_json_guard(json, len, max_depth, max_values, &g))
        return el_diag_set(diag, EL_EUSAGE, "%s refused: %s", what, g.msg);
    char errbuf[512];
    *root = yajl_tree_parse(json, errbuf, sizeof errbuf);
    if (*root)
        return EL_OK;
    /* yajl's message spans lines; keep the first */
    char *nl = strchr(errbuf, '\n');
    if (nl)
        *nl = '\0';
    return el_diag_set(diag, EL_EUSAGE, "%s is not valid JSON: %s", what, errbuf);
}
