/* migrate: plan, or apply, payload migrations (protocol.md §8, cli.md). */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lease/version.h"

/* Markdown summaries stay below 1 MiB (cli.md "GitHub Actions"). */
#define SUMMARY_CAP (1024 * 1024 - 4096)
/* GitHub annotations per level; the rest are summarised in one line. */
#define ANNOTATIONS_PER_LEVEL 10

enum { OPT_APPLY = OPT_COMMAND_BASE + 50, OPT_TO, OPT_ASSUMED_TTL, OPT_FAIL_ON, OPT_SUMMARY };

/* --fail-on levels, least severe first; a status's level decides the exit. */
enum { LVL_OK = 0, LVL_INFO, LVL_WARNING, LVL_ERROR, LVL_NEVER };

typedef struct migrate_args {
	int apply;
	const char *to;
	const char *assumed_ttl;
	int fail_on;
	const char *summary;
} migrate_args;

static int status_level(lease_migrate_status s)
{
	switch (s) {
	case LEASE_MIGRATE_CONFLICT: return LVL_ERROR;
	case LEASE_MIGRATE_SKIPPED_NEWER:
	case LEASE_MIGRATE_SKIPPED_MALFORMED: return LVL_WARNING;
	case LEASE_MIGRATE_WOULD_MIGRATE: return LVL_INFO;
	default: return LVL_OK;
	}
}

static int handle_opt(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	migrate_args *a = payload;

	switch (c) {
	case OPT_APPLY: a->apply = 1; return 0;
	case OPT_TO: a->to = arg; return 0;
	case OPT_ASSUMED_TTL: a->assumed_ttl = arg; return 0;
	case OPT_SUMMARY: a->summary = arg; return 0;
	case OPT_FAIL_ON:
		if (strcmp(arg, "error") == 0)
			a->fail_on = LVL_ERROR;
		else if (strcmp(arg, "warning") == 0)
			a->fail_on = LVL_WARNING;
		else if (strcmp(arg, "info") == 0)
			a->fail_on = LVL_INFO;
		else if (strcmp(arg, "never") == 0)
			a->fail_on = LVL_NEVER;
		else
			return cli_usage(
			        ctx, "--fail-on: '%s' is not one of error, warning, info, never",
			        arg);
		return 0;
	default: return cli_usage(ctx, "unexpected option");
	}
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *report_json(const lease_migrate_report *r)
{
	json_t *o = json_object(), *arr = json_array(), *counts = json_object();
	size_t i;

	for (i = 0; i < r->count; i++) {
		const lease_migrate_entry *e = &r->entries[i];
		json_t *l = json_object();

		json_object_set_new(l, "name", json_string(e->name));
		json_object_set_new(l, "from", str_or_null(e->from));
		json_object_set_new(l, "to", str_or_null(e->to));
		json_object_set_new(l, "method", str_or_null(lease_migrate_method_name(e->method)));
		json_object_set_new(l, "status", json_string(lease_migrate_status_name(e->status)));
		if (e->message[0])
			json_object_set_new(l, "message", json_string(e->message));
		json_array_append_new(arr, l);
	}
	for (i = 0; i < LEASE_MIGRATE_STATUS_COUNT; i++)
		json_object_set_new(counts, lease_migrate_status_name((lease_migrate_status)i),
		                    json_integer((json_int_t)r->counts[i]));
	json_object_set_new(o, "target", json_string(r->target));
	json_object_set_new(o, "applied", json_boolean(r->applied));
	json_object_set_new(o, "leases", arr);
	json_object_set_new(o, "counts", counts);
	return o;
}

static void counts_line(char *buf, size_t len, const lease_migrate_report *r)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < LEASE_MIGRATE_STATUS_COUNT && used < len; i++) {
		if (!r->counts[i])
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%zu %s", used ? ", " : "",
		                         r->counts[i],
		                         lease_migrate_status_name((lease_migrate_status)i));
	}
	if (!used)
		snprintf(buf, len, "no leases");
}

static void print_human(const lease_migrate_report *r, const char *ns)
{
	char line[512];
	size_t i;

	if (r->count)
		printf("%-30s %-8s %-8s %-12s %s\n", "NAME", "FROM", "TO", "METHOD", "STATUS");
	for (i = 0; i < r->count; i++) {
		const lease_migrate_entry *e = &r->entries[i];
		const char *m = lease_migrate_method_name(e->method);

		printf("%-30s %-8s %-8s %-12s %s\n", e->name, e->from[0] ? e->from : "-",
		       e->to[0] ? e->to : "-", m ? m : "-", lease_migrate_status_name(e->status));
		if (e->message[0])
			printf("  %s\n", e->message);
	}
	counts_line(line, sizeof(line), r);
	printf("%s refs/%s/ to %s: %s\n", r->applied ? "migrated" : "plan for", ns, r->target,
	       line);
	if (!r->applied && r->counts[LEASE_MIGRATE_WOULD_MIGRATE])
		printf("nothing written; run with --apply to migrate\n");
	if (r->invalid_names)
		printf("%zu ref(s) under refs/%s/ with invalid lease names were left alone\n",
		       r->invalid_names, ns);
}

/* A bounded text buffer for the markdown summary. */
typedef struct mdbuf {
	char *s;
	size_t len, cap;
	int full;
} mdbuf;

static void md_add(mdbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void md_add(mdbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		b->s[b->len] = '\0';
		b->full = 1;
		return;
	}
	b->len += (size_t)n;
}

/* Escape text for a markdown table cell (payload text included): no pipes,
 * no markup, no line breaks. */
static void md_cell(char *out, size_t outlen, const char *in)
{
	size_t o = 0;

	for (; *in && o + 8 < outlen; in++) {
		const char *rep = NULL;
		char c[2] = {*in, '\0'};

		switch (*in) {
		case '|': rep = "\\|"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '&': rep = "&amp;"; break;
		case '`': rep = "'"; break;
		case '\n':
		case '\r':
		case '\t': rep = " "; break;
		default: rep = c;
		}
		o += (size_t)snprintf(out + o, outlen - o, "%s", rep);
	}
	out[o < outlen ? o : outlen - 1] = '\0';
}

static char *summary_markdown(const lease_migrate_report *r, const char *ns)
{
	mdbuf b = {NULL, 0, SUMMARY_CAP, 0};
	char line[512], msg[600];
	size_t i;

	if (!(b.s = malloc(b.cap)))
		return NULL;
	b.s[0] = '\0';
	counts_line(line, sizeof(line), r);
	md_add(&b, "## reflease migrate: refs/%s/ to %s (%s)\n\n%s\n\n", ns, r->target,
	       r->applied ? "applied" : "plan, nothing written", line);
	if (r->count)
		md_add(&b, "| lease | from | to | method | status | detail |\n"
		           "|---|---|---|---|---|---|\n");
	for (i = 0; i < r->count; i++) {
		const lease_migrate_entry *e = &r->entries[i];
		const char *m = lease_migrate_method_name(e->method);
		size_t before = b.len;

		md_cell(msg, sizeof(msg), e->message);
		md_add(&b, "| `%s` | %s | %s | %s | %s | %s |\n", e->name,
		       e->from[0] ? e->from : "-", e->to[0] ? e->to : "-", m ? m : "-",
		       lease_migrate_status_name(e->status), msg);
		if (b.full || b.len > b.cap - 512) {
			/* leave room for the closing line */
			b.len = before;
			b.s[b.len] = '\0';
			b.full = 0;
			md_add(&b, "\n%zu more lease(s) not listed (summary capped below 1 MiB)\n",
			       r->count - i);
			break;
		}
	}
	return b.s;
}

static int write_summary(cli_ctx *ctx, const char *path, const char *mode, const char *md)
{
	FILE *f = fopen(path, mode);

	if (!f || fputs(md, f) < 0) {
		if (f)
			fclose(f);
		fprintf(stderr, "reflease %s: cannot write the summary to %s\n", ctx->command,
		        path);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* Escape the data of a workflow command so payload text cannot end it or
 * start another (cli.md "GitHub Actions"). */
static void gh_escape(char *out, size_t outlen, const char *in)
{
	size_t o = 0;

	for (; *in && o + 4 < outlen; in++) {
		if (*in == '%' || *in == '\r' || *in == '\n' || *in == ':' || *in == ',') {
			o += (size_t)snprintf(out + o, outlen - o, "%%%02X", (unsigned char)*in);
		} else {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}

static void annotations(const lease_migrate_report *r)
{
	static const struct {
		int level;
		const char *cmd;
	} levels[] = {{LVL_ERROR, "error"}, {LVL_WARNING, "warning"}};
	const char *ga = getenv("GITHUB_ACTIONS");
	size_t i, k;

	if (!ga || strcmp(ga, "true") != 0)
		return;
	for (k = 0; k < sizeof(levels) / sizeof(levels[0]); k++) {
		size_t shown = 0, total = 0;

		for (i = 0; i < r->count; i++) {
			const lease_migrate_entry *e = &r->entries[i];
			char text[600], esc[2000];

			if (status_level(e->status) != levels[k].level)
				continue;
			total++;
			if (shown >= ANNOTATIONS_PER_LEVEL)
				continue;
			shown++;
			snprintf(text, sizeof(text), "lease %s: %s%s%s", e->name,
			         lease_migrate_status_name(e->status), e->message[0] ? ": " : "",
			         e->message);
			gh_escape(esc, sizeof(esc), text);
			fprintf(stderr, "::%s title=reflease migrate::%s\n", levels[k].cmd, esc);
		}
		if (total > shown)
			fprintf(stderr,
			        "::%s title=reflease migrate::%zu more lease(s) at this level "
			        "(see the job summary)\n",
			        levels[k].cmd, total - shown);
	}
}

static int cmd_migrate(cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"apply", no_argument, NULL, OPT_APPLY},
	        {"to", required_argument, NULL, OPT_TO},
	        {"assumed-ttl", required_argument, NULL, OPT_ASSUMED_TTL},
	        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
	        {"summary", required_argument, NULL, OPT_SUMMARY},
	        CLI_GLOBAL_LONGOPTS,
	        {NULL, 0, NULL, 0}};
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report rep;
	migrate_args a = {0, NULL, NULL, LVL_ERROR, NULL};
	lease_store *st;
	char err[512];
	const char *ga, *step;
	char *md;
	long ttl = 0;
	int i, rc, worst = LVL_OK, status = EXIT_OK;
	size_t k;

	if ((i = cli_parse(ctx, argc, argv, CLI_GLOBAL_SHORTOPTS, longopts, handle_opt, &a)) < 0)
		return cli_status_of(i);
	if (i < argc)
		return cli_status_of(cli_usage(ctx, "unexpected argument '%s'", argv[i]));
	if (a.to && lease_migrate_target_validate(a.to, err, sizeof(err)) < 0)
		return cli_status_of(cli_usage(ctx, "--to: %s", err));
	if (a.assumed_ttl &&
	    (rc = cli_parse_seconds(ctx, "--assumed-ttl", a.assumed_ttl, 1, 86400, &ttl)) < 0)
		return cli_status_of(rc);
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	if (a.assumed_ttl && (ttl < lease_store_ttl_min(st) || ttl > lease_store_ttl_max(st)))
		return cli_status_of(cli_usage(ctx,
		                               "--assumed-ttl: '%s' is not a whole number of "
		                               "seconds in %d..%d on a %s store",
		                               a.assumed_ttl, lease_store_ttl_min(st),
		                               lease_store_ttl_max(st), lease_store_kind(st)));
	o.apply = a.apply;
	o.to = a.to;
	o.assumed_ttl = ttl;
	rc = lease_migrate(&rep, st, &o);
	if (rc < 0) {
		lease_migrate_report_clear(&rep);
		return cli_status_of(cli_fail(ctx, rc, "%s", lease_store_last_error(st)));
	}
	if (ctx->json)
		cli_emit_json(stdout, report_json(&rep));
	else
		print_human(&rep, lease_store_namespace(st));
	md = summary_markdown(&rep, lease_store_namespace(st));
	if (md && a.summary && write_summary(ctx, a.summary, "w", md) < 0)
		status = EXIT_SOFTWARE;
	ga = getenv("GITHUB_ACTIONS");
	step = getenv("GITHUB_STEP_SUMMARY");
	if (md && ga && strcmp(ga, "true") == 0 && step && *step)
		write_summary(ctx, step, "a", md);
	free(md);
	annotations(&rep);
	for (k = 0; k < rep.count; k++)
		if (status_level(rep.entries[k].status) > worst)
			worst = status_level(rep.entries[k].status);
	if (status == EXIT_OK &&
	    (rep.counts[LEASE_MIGRATE_CONFLICT] || (worst != LVL_OK && worst >= a.fail_on)))
		status = EXIT_FOUND;
	lease_migrate_report_clear(&rep);
	return status;
}

const cli_command cli_migrate_commands[] = {
        {"migrate", cmd_migrate,
         "migrate [--apply] [--to VERSION] [--assumed-ttl S] [--fail-on LEVEL] [--summary FILE]",
         "Plan, or apply, payload schema migrations over every lease of the namespace.",
         "  --apply            write the migrations (default: plan only, nothing written)\n"
         "  --to VERSION       target schema version (default: this build's, " SDLC_VERSION ")\n"
         "  --assumed-ttl S    ttl_seconds for a payload whose commit time is unknown\n"
         "                     (default 300; within the store's TTL bounds)\n"
         "  --fail-on LEVEL    exit 1 when a lease is at or above LEVEL: error (conflict,\n"
         "                     the default), warning (skipped), info (would_migrate), never;\n"
         "                     a conflict always exits 1\n"
         "  --summary FILE     also write a markdown summary to FILE\n"},
        {NULL, NULL, NULL, NULL, NULL}};
