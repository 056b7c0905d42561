/*
 * template.h - key and attribute templates: literal text with {column}
 * placeholders; "{{" and "}}" stand for literal braces.
 *
 *   el_template *t;
 *   el_template_parse("ACTOR#{follower_id}", &t, &d);
 *   el_template_bind(t, schema, &d);          // column names -> indices
 *   el_template_render(t, &row, &buf, &bad);  // appends "ACTOR#alice"
 */
#ifndef EL_TEMPLATE_H
#define EL_TEMPLATE_H

#include <stdbool.h>  /* bool */

#include "common/buf.h"
#include "common/error.h"
#include "formats/reader.h"

typedef struct el_template el_template;

/* Bounds on what el_template_parse accepts (EL_EUSAGE past them). The text:
 * a mapping file's own limit (16 MB), which keeps offsets in 32 bits. The
 * literal text (every run, braces unescaped): far more than a key can hold
 * (2 KB) or an attribute template needs. */
#define EL_TEMPLATE_MAX_TEXT (16u * 1024u * 1024u)
#define EL_TEMPLATE_MAX_LITERAL (64u * 1024u)

/* Parses text. An unbalanced brace or an empty {} is EL_EUSAGE with the
 * position in diag->column (1-based); so is text past the bounds above.
 * *out NULL on failure. What the parsed template holds is in proportion to
 * the text: at most about 6 bytes per byte of text, whatever its shape (a
 * 1 MB template of placeholders costs 6 MB). */
el_err el_template_parse(const char *text, el_template **out, el_diag *diag) EL_MUST_USE;

/* Resolves every placeholder against the input's columns, in time
 * O(columns + placeholders). An unknown column is EL_EUSAGE: "unknown column
 * 'x' in template '...'; the input has columns: a, b, c"; EL_ENOMEM when the
 * temporary index of the columns cannot be had. May be called again for
 * another schema. */
el_err el_template_bind(el_template *t, const el_schema *schema, el_diag *diag) EL_MUST_USE;

/* Appends the rendered text to out. When a placeholder's value is NULL or
 * empty, *empty_col is set to its column index (else to (size_t)-1) and the
 * rendering goes on; keys reject such rows, attributes need not. Fails only
 * with EL_ENOMEM/EL_ELIMIT from the buffer. */
el_err el_template_render(const el_template *t, const el_row *row, el_buf *out,
                          size_t *empty_col) EL_MUST_USE;

/* The template as written. */
const char *el_template_text(const el_template *t);

/*
 * False when no row can render a and b to the same text; true when some
 * may. Decided from their literal text alone: two renderings are equal
 * only if the literal text before the first placeholder of one is a prefix
 * of the other's (or of the other's whole text), the same for the literal
 * text after the last placeholder, and a template without placeholders is
 * at least as long as the other's literal text plus one byte a
 * placeholder (a key placeholder is never empty: an empty value rejects
 * the row). "TARGET#{a}" and "POST#{b}" cannot meet; "TARGET#{a}" and
 * "TARGET#{b}#x" may.
 */
bool el_template_may_equal(const el_template *a, const el_template *b);

/* True when the template has no placeholder. */
bool el_template_is_literal(const el_template *t);

/* Number of placeholders, and the column name / bound index of the i-th. */
size_t el_template_nrefs(const el_template *t);
const char *el_template_ref_name(const el_template *t, size_t i);
size_t el_template_ref_index(const el_template *t, size_t i);

void el_template_free(el_template *t);

/* Formats "a, b, c" (the schema's column names) into out, for messages. */
void el_schema_list_columns(const el_schema *schema, char *out, size_t len);

#endif
