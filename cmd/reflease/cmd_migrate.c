/* migrate: plan, or apply, payload migrations (protocol.md §8, cli.md). */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "reflease/version.h"
#include "report.h"

/* Bytes kept spare below REPORT_SUMMARY_MAX for the summary's "N more" line. */
#define SUMMARY_RESERVE 512
/* Escaped bytes of a lease's detail in a summary row. */
#define DETAIL_MAX 592

enum { OPT_APPLY = OPT_COMMAND_BASE + 50, OPT_TO, OPT_ASSUMED_TTL, OPT_FAIL_ON, OPT_SUMMARY };

typedef struct migrate_args {
	int apply;
	const char *to;
	const char *assumed_ttl;
	lease_severity fail_on;
	const char *summary;
} migrate_args;

/* A status's --fail-on level, which decides the exit. */
static lease_severity status_level(lease_migrate_status s)
{
	switch (s) {
	case LEASE_MIGRATE_CONFLICT: return LEASE_SEV_ERROR;
	case LEASE_MIGRATE_SKIPPED_NEWER:
	case LEASE_MIGRATE_SKIPPED_MALFORMED: return LEASE_SEV_WARNING;
	case LEASE_MIGRATE_WOULD_MIGRATE: return LEASE_SEV_INFO;
	default: return LEASE_SEV_OK;
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
	case OPT_FAIL_ON: return report_parse_fail_on(ctx, arg, &a->fail_on);
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
		json_object_set_new(l, "method", str_or_null(e->method));
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
	if (r->applied) /* writes requested: how long they were paced (issue 15) */
		json_object_set_new(o, "paced_seconds", json_real((double)r->paced_ms / 1000.0));
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
	else if (r->paced_ms > 0 && used < len) /* GitHub: >= 1 s between writes in bursts */
		snprintf(buf + used, len - used, "; paced %.1f s", (double)r->paced_ms / 1000.0);
}

static void print_human(const lease_migrate_report *r, const char *ns)
{
	char line[512];
	size_t i;

	if (r->count)
		printf("%-30s %-8s %-8s %-12s %s\n", "NAME", "FROM", "TO", "METHOD", "STATUS");
	for (i = 0; i < r->count; i++) {
		const lease_migrate_entry *e = &r->entries[i];

		printf("%-30s %-8s %-8s %-12s %s\n", e->name, e->from[0] ? e->from : "-",
		       e->to[0] ? e->to : "-", e->method ? e->method : "-",
		       lease_migrate_status_name(e->status));
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

static void summary_markdown(mdbuf *b, const lease_migrate_report *r, const char *ns, long limit)
{
	mdbuf row = {NULL, 0, 0};
	char line[512];
	size_t i;

	counts_line(line, sizeof(line), r);
	md_printf(b, "## reflease migrate: refs/%s/ to %s (%s)\n\n%s\n\n", ns, r->target,
	          r->applied ? "applied" : "plan, nothing written", line);
	if (r->count)
		md_printf(b, "%s",
		          "| lease | from | to | method | status | detail |\n"
		          "|---|---|---|---|---|---|\n");
	for (i = 0; i < r->count; i++) {
		const lease_migrate_entry *e = &r->entries[i];

		row.len = 0;
		md_printf(&row, "| `%s` | %s | %s | %s | %s | ", e->name,
		          e->from[0] ? e->from : "-", e->to[0] ? e->to : "-",
		          e->method ? e->method : "-", lease_migrate_status_name(e->status));
		md_text(&row, e->message, MD_ESCAPE_ENTITIES, DETAIL_MAX);
		md_put(&row, " |\n", 3);
		/* leave room for the closing line */
		if (!md_append_capped(b, &row, SUMMARY_RESERVE, limit)) {
			md_printf(b,
			          "\n%zu more lease(s) not listed (summary capped below 1 MiB)\n",
			          r->count - i);
			break;
		}
	}
	md_free(&row);
}

static int write_summary(cli_ctx *ctx, const char *path, const mdbuf *md)
{
	int rc = report_write_summary(path, "a", md);

	if (rc < 0)
		fprintf(stderr, "reflease %s: cannot %s the summary %s: %s\n", ctx->command,
		        rc == REPORT_EOPEN ? "open" : "write", path, strerror(errno));
	return rc < 0 ? -1 : 0;
}

static void annotations(const lease_migrate_report *r)
{
	static const lease_severity levels[] = {LEASE_SEV_ERROR, LEASE_SEV_WARNING};
	report_annotations ann;
	size_t i, k;

	if (!report_github_actions())
		return;
	memset(&ann, 0, sizeof(ann));
	for (k = 0; k < sizeof(levels) / sizeof(levels[0]); k++) {
		for (i = 0; i < r->count; i++) {
			const lease_migrate_entry *e = &r->entries[i];
			char text[600];

			if (status_level(e->status) != levels[k])
				continue;
			snprintf(text, sizeof(text), "lease %s: %s%s%s", e->name,
			         lease_migrate_status_name(e->status), e->message[0] ? ": " : "",
			         e->message);
			/* names and messages hold no control characters: the property
			 * escaping of '%', CR, LF, ':' and ',' is all that applies */
			report_annotate(&ann, levels[k], "reflease migrate", text, 1);
		}
		report_annotate_more(&ann, levels[k], "reflease migrate", "lease(s) at this level");
	}
}

static const struct option migrate_longopts[] = {
        {"apply", no_argument, NULL, OPT_APPLY},
        {"to", required_argument, NULL, OPT_TO},
        {"assumed-ttl", required_argument, NULL, OPT_ASSUMED_TTL},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"summary", required_argument, NULL, OPT_SUMMARY},
        CLI_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};

static int cmd_migrate(cli_ctx *ctx, int argc, char **argv)
{
	lease_migrate_options o = LEASE_MIGRATE_OPTIONS_INIT;
	lease_migrate_report rep;
	migrate_args a = {0, NULL, NULL, LEASE_SEV_ERROR, NULL};
	lease_store *st;
	char err[512];
	const char *step;
	mdbuf md = {NULL, 0, 0};
	long ttl = 0, limit;
	int i, rc, status = EXIT_OK;
	lease_severity worst = LEASE_SEV_OK;
	size_t k;

	if ((i = cli_parse(ctx, argc, argv, CLI_GLOBAL_SHORTOPTS, migrate_longopts, handle_opt,
	                   &a)) < 0)
		return cli_status_of(i);
	if (i < argc)
		return cli_status_of(cli_usage(ctx, "unexpected argument '%s'", argv[i]));
	if (a.to && lease_migrate_target_validate(a.to, err, sizeof(err)) < 0)
		return cli_status_of(cli_usage(ctx, "--to: %s", err));
	/* the syntax now, the bounds of the store in use once it is open */
	if (a.assumed_ttl && (rc = cli_parse_seconds(ctx, "--assumed-ttl", a.assumed_ttl, LONG_MIN,
	                                             LONG_MAX, &ttl)) < 0)
		return cli_status_of(rc);
	/* every output file is checked before the first read or write */
	step = report_step_summary();
	if ((a.summary && (rc = report_check_writable(ctx, "--summary", a.summary)) < 0) ||
	    (step && (rc = report_check_writable(ctx, "GITHUB_STEP_SUMMARY", step)) < 0))
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
	/* appended, like reconcile's, within what the fuller file leaves */
	limit = report_summary_limit(a.summary);
	if (step && report_summary_limit(step) < limit)
		limit = report_summary_limit(step);
	summary_markdown(&md, &rep, lease_store_namespace(st), limit);
	if (md.s && a.summary && write_summary(ctx, a.summary, &md) < 0)
		status = EXIT_CONFIG;
	if (md.s && step && (!a.summary || strcmp(a.summary, step) != 0) &&
	    write_summary(ctx, step, &md) < 0)
		status = EXIT_CONFIG;
	md_free(&md);
	annotations(&rep);
	for (k = 0; k < rep.count; k++)
		if (status_level(rep.entries[k].status) > worst)
			worst = status_level(rep.entries[k].status);
	if (status == EXIT_OK &&
	    (rep.counts[LEASE_MIGRATE_CONFLICT] || (worst != LEASE_SEV_OK && worst >= a.fail_on)))
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
         "  --summary FILE     also append a markdown summary to FILE (checked before\n"
         "                     anything is read or written: exit 78)\n",
         migrate_longopts},
        {NULL, NULL, NULL, NULL, NULL, NULL}};
