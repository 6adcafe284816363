/* Job summaries, annotations and --fail-on shared by reconcile and migrate
 * (cli.md "GitHub Actions"). */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int report_github_actions(void)
{
	const char *v = getenv("GITHUB_ACTIONS");

	return v && strcmp(v, "true") == 0;
}

const char *report_step_summary(void)
{
	const char *v = getenv("GITHUB_STEP_SUMMARY");

	return report_github_actions() && v && *v ? v : NULL;
}

int report_parse_fail_on(cli_ctx *ctx, const char *arg, lease_severity *out)
{
	if (lease_severity_parse(out, arg) < 0)
		return cli_usage(ctx, "--fail-on: '%s' is not one of error, warning, info, never",
		                 arg);
	return 0;
}

const char *report_clean(char *buf, size_t len, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* ---- markdown buffer ---- */

void md_put(mdbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 4096);
		char *grown;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(grown = realloc(b->s, cap)))
			return;
		b->s = grown;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void md_printf(mdbuf *b, const char *fmt, ...)
{
	char tmp[2048], *big;
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(tmp)) {
		md_put(b, tmp, (size_t)n);
	} else if (n > 0 && (big = malloc((size_t)n + 1))) {
		vsnprintf(big, (size_t)n + 1, fmt, again);
		md_put(b, big, (size_t)n);
		free(big);
	}
	va_end(again);
}

/* One character's replacement, or NULL to copy it. */
static const char *md_escape_char(unsigned char ch, md_escape style)
{
	if (ch == '<')
		return "&lt;";
	if (ch == '>')
		return "&gt;";
	if (ch == '&')
		return "&amp;";
	if (style == MD_ESCAPE_ENTITIES) {
		if (ch == '|')
			return "\\|";
		if (ch == '`')
			return "'";
		return ch == '\n' || ch == '\r' || ch == '\t' ? " " : NULL;
	}
	if (ch < 0x20 || ch == 0x7f)
		return " ";
	return NULL;
}

void md_text(mdbuf *b, const char *s, md_escape style, size_t max)
{
	size_t start = b->len;

	for (; *s && (!max || b->len - start < max); s++) {
		unsigned char ch = (unsigned char)*s;
		const char *rep = md_escape_char(ch, style);

		if (rep)
			md_put(b, rep, strlen(rep));
		else if (style == MD_ESCAPE_BACKSLASH && strchr("\\`*_[]|#!~@", ch)) {
			md_put(b, "\\", 1);
			md_put(b, s, 1);
		} else
			md_put(b, s, 1);
	}
}

int md_append_capped(mdbuf *b, const mdbuf *row, size_t reserve, long limit)
{
	if (!row->s || (long)(b->len + row->len + reserve) > limit)
		return 0;
	md_put(b, row->s, row->len);
	return 1;
}

void md_free(mdbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

/* ---- summary files ---- */

int report_write_summary(const char *path, const char *mode, const mdbuf *md)
{
	FILE *f = fopen(path, mode);

	if (!f)
		return REPORT_EOPEN;
	if (md->s && fwrite(md->s, 1, md->len, f) != md->len) {
		fclose(f);
		return REPORT_EWRITE;
	}
	return fclose(f) == 0 ? 0 : REPORT_ECLOSE;
}

int report_check_writable(cli_ctx *ctx, const char *what, const char *path)
{
	struct stat sb;
	int fd, created = 0;

	if (!*path) /* the argument itself is wrong: usage, as --json-file '' */
		return cli_usage(ctx, "%s: empty file name", what);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return cli_fail(ctx, LEASE_ECONFIG,
		                "%s %s is a directory; name a file (nothing was read or written)",
		                what, path);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		created = fd >= 0;
	}
	if (fd < 0)
		return cli_fail(ctx, LEASE_ECONFIG,
		                "%s %s: cannot write: %s (nothing was read or written)", what, path,
		                strerror(errno));
	close(fd);
	if (created)
		unlink(path);
	return 0;
}

long report_summary_limit(const char *path)
{
	const char *v = getenv("REFLEASE_SUMMARY_MAX"); /* testing aid: a smaller cap */
	struct stat sb;
	long limit = REPORT_SUMMARY_MAX;

	if (v && *v) {
		long n = strtol(v, NULL, 10);
		if (n > 256 && n < limit)
			limit = n;
	}
	/* the step's summary file may already hold other output */
	if (path && stat(path, &sb) == 0 && sb.st_size > 0)
		limit -= (long)sb.st_size;
	return limit;
}

/* ---- GitHub annotations ---- */

static const char *const annotation_cmd[] = {NULL, "notice", "warning", "error"};

int report_annotate(report_annotations *a, lease_severity level, const char *title,
                    const char *text, int strict)
{
	char t[400], d[2048];

	if (level < LEASE_SEV_INFO || level > LEASE_SEV_ERROR)
		return 0;
	if (a->shown[level] >= REPORT_ANNOTATIONS_PER_LEVEL) {
		a->more[level]++;
		return 0;
	}
	report_gha_escape(t, sizeof(t), title, 1);
	report_gha_escape(d, sizeof(d), text, strict);
	fprintf(stderr, "::%s title=%s::%s\n", annotation_cmd[level], t, d);
	a->shown[level]++;
	return 1;
}

void report_annotate_more(const report_annotations *a, lease_severity level, const char *title,
                          const char *what)
{
	if (level < LEASE_SEV_INFO || level > LEASE_SEV_ERROR || !a->more[level])
		return;
	fprintf(stderr, "::%s title=%s::%zu more %s (see the job summary)\n", annotation_cmd[level],
	        title, a->more[level], what);
}
