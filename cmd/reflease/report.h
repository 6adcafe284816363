/*
 * Reporting shared by the sweep commands (reconcile, migrate): the markdown
 * job summary, its files, GitHub workflow-command annotations and the
 * --fail-on level (cli.md "GitHub Actions", "Exit status"). Only cmd/ prints.
 */
#ifndef REFLEASE_REPORT_H
#define REFLEASE_REPORT_H

#include "cli.h"

#include <stddef.h>

/** GitHub's job-summary limit is 1 MiB per step; summaries stay below this many bytes. */
#define REPORT_SUMMARY_MAX (1024L * 1024L - 4096L)
/** At most this many annotations per level; the rest are summarised in one line (cli.md). */
#define REPORT_ANNOTATIONS_PER_LEVEL 10

/** 1 when GITHUB_ACTIONS=true (running as a GitHub Actions step), else 0. */
int report_github_actions(void);

/**
 * The path in $GITHUB_STEP_SUMMARY when GITHUB_ACTIONS=true and it is set and
 * non-empty; NULL otherwise. The string belongs to the environment.
 */
const char *report_step_summary(void);

/**
 * Parse a --fail-on LEVEL ("error", "warning", "info", "never") into @p out.
 * @return 0, or -EXIT_USAGE after printing the usage error
 */
int report_parse_fail_on(cli_ctx *ctx, const char *arg, lease_severity *out);

/**
 * Copy payload text @p s into @p buf (@p len bytes, NUL included, truncated)
 * with every control character (C0, DEL) replaced by '?', so that it never
 * reaches a terminal nor starts a line a CI runner reads as a command.
 * @return @p buf
 */
const char *report_clean(char *buf, size_t len, const char *s);

/* ---- markdown buffer ---- */

/** A growing markdown text buffer; start with {NULL, 0, 0}, release with md_free(). */
typedef struct mdbuf {
	char *s;    /**< NUL-terminated text (NULL until the first append); owned */
	size_t len; /**< bytes of text, NUL excluded */
	size_t cap; /**< bytes allocated */
} mdbuf;

/** Append @p n bytes of @p s. Out of memory: nothing is appended. */
void md_put(mdbuf *b, const char *s, size_t n);

/** Append printf-formatted text. */
void md_printf(mdbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** How md_text() escapes payload text for a markdown table cell. */
typedef enum md_escape {
	/** reconcile: "<>&" as entities, controls as a space, "\`*_[]|#!~@" behind a backslash */
	MD_ESCAPE_BACKSLASH,
	/** migrate: "<>&" as entities, "|" as "\|", "`" as "'", TAB/CR/LF as a space */
	MD_ESCAPE_ENTITIES
} md_escape;

/**
 * Append payload text @p s escaped for a table cell: no markup, no HTML, no
 * line breaks. With @p max > 0 the escaping stops at the first character met
 * once @p max bytes were appended (0: no limit).
 */
void md_text(mdbuf *b, const char *s, md_escape style, size_t max);

/**
 * Append @p row to @p b when @p b then keeps @p reserve bytes spare below
 * @p limit bytes (room for a closing "N more" line).
 * @return 1 when appended, 0 when it does not fit (or @p row is empty for
 *         lack of memory)
 */
int md_append_capped(mdbuf *b, const mdbuf *row, size_t reserve, long limit);

/** Release @p b's text and zero it. */
void md_free(mdbuf *b);

/* ---- summary files ---- */

/** report_write_summary() results. */
enum { REPORT_EOPEN = -1, REPORT_EWRITE = -2, REPORT_ECLOSE = -3 };

/**
 * Write @p md's text to @p path, opened with fopen mode @p mode ("w" or "a").
 * Prints nothing: the command words its own error.
 * @return 0, REPORT_EOPEN (not opened), REPORT_EWRITE (write failed) or
 *         REPORT_ECLOSE (close failed)
 */
int report_write_summary(const char *path, const char *mode, const mdbuf *md);

/**
 * Check, before anything is read or written, that the output file @p path
 * (given by option or variable @p what) can be appended to: an existing file
 * is opened for appending, a missing one created and removed again.
 * @return 0, or -EXIT_CONFIG after printing what is wrong with @p path
 */
int report_check_writable(cli_ctx *ctx, const char *what, const char *path);

/**
 * The byte budget of a summary appended to @p path: REPORT_SUMMARY_MAX, or
 * $REFLEASE_SUMMARY_MAX when set between 257 and that (a testing aid), less
 * the bytes @p path already holds (NULL: none). May be negative.
 */
long report_summary_limit(const char *path);

/* ---- GitHub annotations ---- */

/**
 * Escape @p in for a GitHub workflow command (protocol.md §7, cli.md "GitHub
 * Actions"): "%" → %25, CR → %0D, LF → %0A, and for a property value also
 * ":" → %3A and "," → %2C. Other C0 controls become %XX too. The result is
 * always NUL-terminated and truncated (never mid-escape) to @p outlen − 1.
 * @param property  non-zero: escape as a property value
 * @return the length written
 */
size_t report_gha_escape(char *out, size_t outlen, const char *in, int property);

/** Annotations emitted and held back per level (LEASE_SEV_INFO..ERROR); zero it to start. */
typedef struct report_annotations {
	size_t shown[LEASE_SEV_ERROR + 1];
	size_t more[LEASE_SEV_ERROR + 1];
} report_annotations;

/**
 * Print "::notice|warning|error title=TITLE::TEXT" on stderr for @p level
 * (info, warning or error) unless REPORT_ANNOTATIONS_PER_LEVEL were already
 * printed at that level; then it is only counted. @p title is escaped as a
 * property value (at most 399 bytes), @p text as the command's data (at most
 * 2047 bytes), also as a property value when @p strict (report_gha_escape()).
 * @return 1 when printed, 0 when held back or @p level is not annotated
 */
int report_annotate(report_annotations *a, lease_severity level, const char *title,
                    const char *text, int strict);

/**
 * When annotations at @p level were held back, print
 * "::<level> title=TITLE::N more WHAT (see the job summary)" on stderr;
 * @p title and @p what are literal text without characters to escape.
 */
void report_annotate_more(const report_annotations *a, lease_severity level, const char *title,
                          const char *what);

#endif
