/* reconcile and history (protocol.md §6, §7; cli.md): the sweep's human table,
 * --json object, markdown job summary, GitHub annotations and exit status;
 * a lease's history. */
#define _DEFAULT_SOURCE /* fileno, isatty */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* Bytes kept spare below the summary's budget for its "N more" line. */
#define SUMMARY_RESERVE 200
/* Show a progress line for sweeps of at least this many leases. */
#define PROGRESS_MIN 2000

enum {
	OPT_REAP = OPT_COMMAND_BASE + 50,
	OPT_PRUNE,
	OPT_FAIL_ON,
	OPT_SUMMARY,
	OPT_GRACE,
	OPT_ASSUMED_TTL,
	OPT_MAX
};

typedef struct stream_ctx stream_ctx;

/* What the visit keeps while every entry is printed as it comes and freed:
 * the markdown rows (capped), the annotations (capped by report_annotate),
 * the JSON action lists (one small object per action) and the first failed
 * action. Nothing grows with the leases that are fine. */
struct stream_ctx {
	cli_ctx *ctx;
	const char *ns;
	size_t seen;
	mdbuf rows, row;
	long rows_limit; /* 0: no summary */
	size_t listed, shown;
	int annotate;
	report_annotations ann;
	json_t *reaped, *skipped, *pruned, *locks;
	size_t failed;
	char first_kind[32], first_name[LEASE_NAME_MAX + 1], first_msg[400];
	int first_code;
	lease_budget budgets[LEASE_BUDGET_MAX]; /* the store's request budgets seen (issue 39) */
	size_t nbudgets;
};

/* Bytes kept for the summary's header line above its rows. */
#define SUMMARY_HEADER 1024

typedef struct reconcile_args {
	lease_reconcile_options o;
	lease_severity fail_on;
	const char *summary;
	long max_items;
} reconcile_args;

static int reconcile_opt(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	reconcile_args *a = payload;
	long v;
	int rc;

	switch (c) {
	case OPT_REAP: a->o.reap = 1; return 0;
	case OPT_PRUNE:
		if ((rc = cli_parse_number(ctx, "--prune-released", arg, 0, 36500, "days", &v)) < 0)
			return rc;
		a->o.prune_days = v;
		return 0;
	case OPT_FAIL_ON: return report_parse_fail_on(ctx, arg, &a->fail_on);
	case OPT_SUMMARY: a->summary = arg; return 0;
	case OPT_GRACE:
		if ((rc = cli_parse_seconds(ctx, "--grace", arg, 0, 86400, &v)) < 0)
			return rc;
		a->o.grace_seconds = v;
		return 0;
	case OPT_ASSUMED_TTL:
		if ((rc = cli_parse_seconds(ctx, "--assumed-ttl", arg, 1, 86400, &v)) < 0)
			return rc;
		a->o.default_ttl = v;
		return 0;
	case OPT_MAX:
		if ((rc = cli_parse_number(ctx, "--max", arg, 1, 100000000, "entries", &v)) < 0)
			return rc;
		a->max_items = v;
		return 0;
	default: return cli_usage(ctx, "unexpected option");
	}
}

/* ---- JSON ----------------------------------------------------------------------------- */

static json_t *number_json(double v)
{
	if (v == (double)(json_int_t)v)
		return json_integer((json_int_t)v);
	return json_real(v);
}

static json_t *anomaly_json(const lease_anomaly *a)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "id", lease_anomaly_name(a->id), "severity",
	                      lease_severity_name(a->severity), "message", a->message);

	if (a->has_floor) {
		json_object_set_new(o, "method", json_string(lease_hb_method_name(a->method)));
		json_object_set_new(o, "interval_seconds", json_integer(a->interval_seconds));
		json_object_set_new(o, "floor_seconds", number_json(a->floor_seconds));
		if (a->method == LEASE_HB_APPROXIMATE)
			json_object_set_new(o, "assumed_ttl_seconds", json_integer(a->assumed_ttl));
	} else if (a->id == LEASE_ANOM_EXPIRED) {
		json_object_set_new(o, "expired_seconds", json_integer(a->seconds));
	} else if (a->id == LEASE_ANOM_STALE_REF_LOCK) {
		json_object_set_new(o, "age_seconds", json_integer(a->seconds));
	} else if (a->id == LEASE_ANOM_STALE_TICKET) {
		json_object_set_new(o, "expired_seconds", json_integer(a->seconds));
	} else if (a->id == LEASE_ANOM_SLOT_COUNT_MISMATCH) {
		json_object_set_new(o, "slots", json_integer(a->slots));
		json_object_set_new(o, "other", json_string(a->other));
		json_object_set_new(o, "other_slots",
		                    a->other_slots ? json_integer(a->other_slots) : json_null());
	}
	return o;
}

static json_t *oid_json(int present, const lease_oid *oid)
{
	char hex[LEASE_OID_HEXSZ + 1];

	if (!present)
		return json_null();
	lease_oid_tohex(hex, oid);
	return json_string(hex);
}

/* One lease of `reconcile --json`'s "leases". */
static json_t *entry_json(const lease_reconcile_entry *e)
{
	char exp[LEASE_TIME_STRSZ + 1];
	json_t *an = json_array();
	size_t k;

	for (k = 0; k < e->anomaly_count; k++)
		json_array_append_new(an, anomaly_json(&e->anomalies[k]));
	if (e->has_payload)
		lease_time_format(exp, e->payload.expires_at);
	return json_pack("{s:s, s:o, s:s?, s:s?, s:s?, s:o}", "name", e->name, "oid",
	                 oid_json(e->present, &e->oid), "phase",
	                 e->has_payload ? lease_phase_name(e->payload.phase) : NULL, "owner",
	                 e->has_payload ? e->payload.owner : NULL, "expires_at",
	                 e->has_payload ? exp : NULL, "anomalies", an);
}

/* The request budgets the store's answers announced (github:; issue 39):
 * [{"resource", "limit", "remaining", "used", "reset"}], newest figures;
 * [] on stores that announce none. */
static json_t *budgets_json(const stream_ctx *c)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < c->nbudgets && i < LEASE_BUDGET_MAX; i++) {
		const lease_budget *b = &c->budgets[i];
		char reset[LEASE_TIME_STRSZ + 1];
		json_t *o = json_pack("{s:s, s:I, s:I}", "resource", b->resource, "limit",
		                      (json_int_t)b->limit, "remaining", (json_int_t)b->remaining);
		if (!o)
			continue;
		if (b->used >= 0)
			json_object_set_new(o, "used", json_integer(b->used));
		if (b->reset > 0) {
			lease_time_format(reset, b->reset);
			json_object_set_new(o, "reset", json_string(reset));
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* The budgets as one markdown sentence (the job summary), nothing when none. */
static void md_budgets(mdbuf *b, const stream_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nbudgets && i < LEASE_BUDGET_MAX; i++) {
		const lease_budget *g = &c->budgets[i];
		char reset[LEASE_TIME_STRSZ + 1] = "?";
		if (g->reset > 0)
			lease_time_format(reset, g->reset);
		md_printf(b, "%s`%s` %ld of %ld left (resets %s)",
		          i ? ", "
		            : "GitHub request budgets (the leases of this repository compete "
		              "for them): ",
		          g->resource, g->remaining, g->limit, reset);
	}
	if (c->nbudgets)
		md_put(b, ".\n\n", 3);
}

/* Everything of `reconcile --json` but "leases" (streamed before it): the
 * summary @p r, @p scanned leases in all, and the actions gathered by the
 * sweep's visit in @p c. */
static json_t *report_json(const lease_reconcile_report *r, size_t scanned, stream_ctx *c)
{
	char now[LEASE_TIME_STRSZ + 1];
	json_t *top;

	lease_time_format(now, r->now);
	top = json_pack("{s:s, s:I, s:s, s:I, s:{s:I, s:I, s:I, s:I}, s:O, s:O, s:O, s:O}",
	                "namespace", r->ns, "scanned", (json_int_t)scanned, "now", now,
	                "grace_seconds", (json_int_t)r->grace_seconds, "counts", "ok",
	                (json_int_t)r->counts[LEASE_SEV_OK], "info",
	                (json_int_t)r->counts[LEASE_SEV_INFO], "warning",
	                (json_int_t)r->counts[LEASE_SEV_WARNING], "error",
	                (json_int_t)r->counts[LEASE_SEV_ERROR], "reaped", c->reaped, "skipped",
	                c->skipped, "pruned", c->pruned, "locks_removed", c->locks);
	if (top)
		json_object_set_new(top, "tickets_removed",
		                    json_integer((json_int_t)r->tickets_removed));
	/* writes made: how long they were paced (GitHub asks >= 1 s in bursts) */
	if (top && (r->reaped || r->pruned || r->skipped || r->paced_ms))
		json_object_set_new(top, "paced_seconds", json_real((double)r->paced_ms / 1000.0));
	if (top)
		json_object_set_new(top, "budgets", budgets_json(c));
	return top;
}
/* ---- human table ---------------------------------------------------------------------- */

static void print_human_entry(const lease_reconcile_entry *e)
{
	char buf[LEASE_IDENT_MAX + 1], msg[400], exp[LEASE_TIME_STRSZ + 1] = "-";
	size_t k;

	if (e->has_payload)
		lease_time_format(exp, e->payload.expires_at);
	printf("%-30s %-9s %-24s %-20s ", report_clean(msg, 200, e->name),
	       e->has_payload ? lease_phase_name(e->payload.phase) : "?",
	       e->has_payload ? report_clean(buf, sizeof(buf), e->payload.owner) : "?", exp);
	if (!e->anomaly_count)
		printf("ok");
	for (k = 0; k < e->anomaly_count; k++)
		printf("%s%s(%s)", k ? ", " : "", lease_anomaly_name(e->anomalies[k].id),
		       lease_severity_name(e->anomalies[k].severity));
	printf("\n");
	for (k = 0; k < e->anomaly_count; k++)
		printf("    %s: %s\n", lease_anomaly_name(e->anomalies[k].id),
		       report_clean(msg, sizeof(msg), e->anomalies[k].message));
	if (e->action == LEASE_ACTION_REAPED)
		printf("    reaped: released by CAS\n");
	else if (e->action == LEASE_ACTION_PRUNED)
		printf("    pruned: archived as %s\n", e->archive_ref);
	else if (e->action == LEASE_ACTION_SKIPPED)
		printf("    skipped %s: %s\n", e->action_kind ? e->action_kind : "action",
		       report_clean(msg, sizeof(msg), e->action_message ? e->action_message : ""));
	if (e->lock_removed)
		printf("    stale ref lock removed\n");
	if (e->tickets_removed)
		printf("    stale tickets removed: %zu\n", e->tickets_removed);
}

static void print_human_footer(const lease_reconcile_report *r, size_t scanned)
{
	char now[LEASE_TIME_STRSZ + 1];

	lease_time_format(now, r->now);
	printf("\nscanned %zu in refs/%s/ at %s: %zu ok, %zu info, %zu warning, %zu error", scanned,
	       r->ns, now, r->counts[LEASE_SEV_OK], r->counts[LEASE_SEV_INFO],
	       r->counts[LEASE_SEV_WARNING], r->counts[LEASE_SEV_ERROR]);
	if (r->reaped || r->pruned || r->skipped || r->locks_removed)
		printf("; reaped %zu, pruned %zu, skipped %zu, locks removed %zu", r->reaped,
		       r->pruned, r->skipped, r->locks_removed);
	if (r->paced_ms > 0) /* GitHub asks for >= 1 s between writes in bursts */
		printf("; paced %.1f s", (double)r->paced_ms / 1000.0);
	printf("\n");
}

/* ---- markdown summary ----------------------------------------------------------------- */

static void md_row(mdbuf *b, const lease_reconcile_entry *e)
{
	char exp[LEASE_TIME_STRSZ + 1] = "-";
	size_t k;

	if (e->has_payload)
		lease_time_format(exp, e->payload.expires_at);
	md_put(b, "| ", 2);
	md_text(b, e->name, MD_ESCAPE_BACKSLASH, 0);
	md_printf(b, " | %s | ", e->has_payload ? lease_phase_name(e->payload.phase) : "?");
	md_text(b, e->has_payload ? e->payload.owner : "?", MD_ESCAPE_BACKSLASH, 0);
	md_printf(b, " | %s | ", exp);
	for (k = 0; k < e->anomaly_count; k++) {
		md_printf(b, "%s**%s** `%s`: ", k ? "<br>" : "",
		          lease_severity_name(e->anomalies[k].severity),
		          lease_anomaly_name(e->anomalies[k].id));
		md_text(b, e->anomalies[k].message, MD_ESCAPE_BACKSLASH, 0);
	}
	/* the action on a line of its own only after anomalies (issue 23: no
	 * empty first line, "| <br>pruned |") */
	if (e->action == LEASE_ACTION_REAPED)
		md_printf(b, "%sreaped", e->anomaly_count ? "<br>" : "");
	else if (e->action == LEASE_ACTION_PRUNED)
		md_printf(b, "%spruned", e->anomaly_count ? "<br>" : "");
	else if (e->action == LEASE_ACTION_SKIPPED) {
		md_printf(b, "%sskipped %s: ", e->anomaly_count ? "<br>" : "",
		          e->action_kind ? e->action_kind : "");
		md_text(b, e->action_message ? e->action_message : "", MD_ESCAPE_BACKSLASH, 0);
	}
	md_put(b, " |\n", 3);
}

/* The summary: the sweep's counts, then the rows the visit rendered (kept
 * under the smallest summary file's limit, with an "N more" line). */
static void render_summary(mdbuf *b, const lease_reconcile_report *r, size_t scanned,
                           const stream_ctx *c)
{
	char now[LEASE_TIME_STRSZ + 1];

	lease_time_format(now, r->now);
	md_printf(b, "## reflease reconcile: refs/%s/\n\n", r->ns);
	md_printf(b, "Scanned **%zu** leases at %s: %zu ok, %zu info, %zu warning, %zu error.",
	          scanned, now, r->counts[LEASE_SEV_OK], r->counts[LEASE_SEV_INFO],
	          r->counts[LEASE_SEV_WARNING], r->counts[LEASE_SEV_ERROR]);
	if (r->reaped || r->pruned || r->skipped || r->locks_removed)
		md_printf(b, " Reaped %zu, pruned %zu, skipped %zu, stale locks removed %zu.",
		          r->reaped, r->pruned, r->skipped, r->locks_removed);
	if (r->paced_ms > 0)
		md_printf(b,
		          " Writes paced %.1f s (GitHub asks for >= 1 s between them in bursts).",
		          (double)r->paced_ms / 1000.0);
	md_put(b, "\n\n", 2);
	md_budgets(b, c);
	if (!c->listed) {
		md_printf(b, "%s", "No anomalies.\n");
		return;
	}
	md_printf(b, "%s",
	          "| lease | phase | owner | expires_at | anomalies |\n|---|---|---|---|---|\n");
	if (c->rows.len)
		md_put(b, c->rows.s, c->rows.len);
	if (c->listed > c->shown)
		md_printf(b,
		          "\n_%zu more leases with anomalies not shown (summary kept under 1 MiB; "
		          "run `reflease reconcile --json` for all)._\n",
		          c->listed - c->shown);
}

static int write_summary(cli_ctx *ctx, const char *path, const lease_reconcile_report *r,
                         size_t scanned, const stream_ctx *c)
{
	mdbuf b = {NULL, 0, 0};
	long limit = report_summary_limit(path);
	int rc;

	if (limit < SUMMARY_HEADER + SUMMARY_RESERVE) {
		fprintf(stderr, "reflease reconcile: %s is nearly full; summary not written\n",
		        path);
		return 0;
	}
	render_summary(&b, r, scanned, c);
	/* a failed write or close leaves what was written, as a partial summary */
	if ((rc = report_write_summary(path, "a", &b)) < 0) {
		md_free(&b);
		return cli_fail(ctx, LEASE_ECONFIG, "cannot %s the summary %s: %s",
		                rc == REPORT_EOPEN ? "open" : "write", path, strerror(errno));
	}
	md_free(&b);
	return 0;
}

/* ---- the streamed sweep (issue 29) ------------------------------------------------------ */

static void stream_annotate(stream_ctx *c, const lease_reconcile_entry *e)
{
	char title[1024], text[1024];
	size_t k;

	for (k = 0; k < e->anomaly_count; k++) {
		const lease_anomaly *a = &e->anomalies[k];
		lease_severity sev = a->severity > LEASE_SEV_ERROR ? LEASE_SEV_ERROR : a->severity;

		snprintf(title, sizeof(title), "reflease reconcile: refs/%s/%s", c->ns, e->name);
		snprintf(text, sizeof(text), "%s %s: %s", e->name, lease_anomaly_name(a->id),
		         a->message);
		report_annotate(&c->ann, sev, title, text, 0);
	}
}

static void annotate_more(stream_ctx *c)
{
	char what[64];
	int s;

	for (s = LEASE_SEV_ERROR; s >= LEASE_SEV_INFO; s--) {
		snprintf(what, sizeof(what), "%s anomalies not annotated",
		         lease_severity_name((lease_severity)s));
		report_annotate_more(&c->ann, (lease_severity)s, "reflease reconcile", what);
	}
	fflush(stderr);
}

/* An action due but not done counts as failed unless a concurrent write won
 * (LEASE_ECAS: the CAS doing its job). */
static void stream_actions(stream_ctx *c, const lease_reconcile_entry *e)
{
	if (e->action == LEASE_ACTION_REAPED)
		json_array_append_new(c->reaped,
		                      json_pack("{s:s, s:o, s:o}", "name", e->name, "oid",
		                                oid_json(1, &e->oid), "released_oid",
		                                oid_json(1, &e->action_oid)));
	else if (e->action == LEASE_ACTION_PRUNED)
		json_array_append_new(c->pruned, json_pack("{s:s, s:o, s:s}", "name", e->name,
		                                           "oid", oid_json(1, &e->oid),
		                                           "archive_ref", e->archive_ref));
	else if (e->action == LEASE_ACTION_SKIPPED)
		json_array_append_new(c->skipped,
		                      json_pack("{s:s, s:o, s:s, s:s, s:s}", "name", e->name, "oid",
		                                oid_json(e->present, &e->oid), "action",
		                                e->action_kind ? e->action_kind : "?", "reason",
		                                e->action_message ? e->action_message : "", "code",
		                                lease_error_id(e->action_code)));
	if (e->lock_removed)
		json_array_append_new(c->locks, json_string(e->name));
	if (e->action == LEASE_ACTION_SKIPPED && e->action_code != LEASE_ECAS && !c->failed++) {
		snprintf(c->first_kind, sizeof(c->first_kind), "%s",
		         e->action_kind ? e->action_kind : "action");
		snprintf(c->first_name, sizeof(c->first_name), "%s", e->name);
		snprintf(c->first_msg, sizeof(c->first_msg), "%s",
		         e->action_message ? e->action_message : "?");
		c->first_code = e->action_code;
	}
}

static int stream_visit(const lease_reconcile_entry *e, void *payload)
{
	stream_ctx *c = payload;

	if (c->ctx->json) {
		if (cli_stream_json_item(entry_json(e), c->seen == 0) < 0)
			return LEASE_ENOMEM;
	} else {
		print_human_entry(e);
	}
	c->seen++;
	if (!e->anomaly_count && e->action == LEASE_ACTION_NONE && !e->lock_removed)
		return 0;
	stream_actions(c, e);
	if (c->annotate)
		stream_annotate(c, e);
	if (c->rows_limit && (e->anomaly_count || e->action != LEASE_ACTION_NONE)) {
		c->listed++;
		if (c->shown + 1 == c->listed) {
			c->row.len = 0;
			md_row(&c->row, e);
			/* keep room for the header and the closing "N more" line */
			if (md_append_capped(&c->rows, &c->row, SUMMARY_RESERVE, c->rows_limit))
				c->shown++;
		}
	}
	return 0;
}

/* The exit status of the actions: 0, or that of the first one due but not done
 * for a failure (a write refused, unreachable, unverified). */
static int actions_status(cli_ctx *ctx, const stream_ctx *c)
{
	char msg[400];

	if (!c->failed)
		return EXIT_OK;
	fprintf(stderr,
	        "reflease %s: %zu action(s) failed; first: %s %s: %s (exit %d; see the "
	        "skipped list)\n",
	        ctx->command, c->failed, c->first_kind, c->first_name,
	        report_clean(msg, sizeof(msg), c->first_msg), cli_exit_for(c->first_code));
	return cli_exit_for(c->first_code);
}

/* ---- progress ------------------------------------------------------------------------- */

static void progress(size_t done, size_t total, void *payload)
{
	(void)payload;
	if (total < PROGRESS_MIN)
		return;
	fprintf(stderr, "\rreflease reconcile: %zu/%zu leases", done, total);
	fflush(stderr);
}

static const struct option reconcile_longopts[] = {
        {"reap", no_argument, NULL, OPT_REAP},
        {"prune-released", required_argument, NULL, OPT_PRUNE},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"summary", required_argument, NULL, OPT_SUMMARY},
        {"grace", required_argument, NULL, OPT_GRACE},
        {"assumed-ttl", required_argument, NULL, OPT_ASSUMED_TTL},
        CLI_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};

static int cmd_reconcile(cli_ctx *ctx, int argc, char **argv)
{
	lease_reconcile_options defaults = LEASE_RECONCILE_OPTIONS_INIT;
	lease_reconcile_report rep;
	reconcile_args a;
	stream_ctx sc;
	lease_store *st;
	const char *gss;
	size_t scanned;
	int i, rc, tty, status;

	memset(&a, 0, sizeof(a));
	a.o = defaults;
	a.fail_on = LEASE_SEV_ERROR;
	if ((i = cli_parse(ctx, argc, argv, CLI_GLOBAL_SHORTOPTS, reconcile_longopts, reconcile_opt,
	                   &a)) < 0)
		return cli_status_of(i);
	if (i < argc)
		return cli_status_of(cli_usage(ctx, "unexpected argument '%s'", argv[i]));
	/* every output file is checked before the first read or write */
	gss = report_github_actions() ? report_step_summary() : NULL;
	if ((a.summary && (rc = report_check_writable(ctx, "--summary", a.summary)) < 0) ||
	    (gss && (rc = report_check_writable(ctx, "GITHUB_STEP_SUMMARY", gss)) < 0))
		return cli_status_of(rc);
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	a.o.owner = ctx->owner;
	a.o.host = ctx->host;
	tty = isatty(fileno(stderr)) && ctx->verbosity >= LEASE_LOG_WARN;
	if (tty)
		a.o.progress = progress;
	memset(&sc, 0, sizeof(sc));
	sc.ctx = ctx;
	sc.ns = lease_store_namespace(st);
	sc.annotate = report_github_actions();
	sc.reaped = json_array();
	sc.skipped = json_array();
	sc.pruned = json_array();
	sc.locks = json_array();
	if (a.summary || gss) {
		long la = a.summary ? report_summary_limit(a.summary) : LONG_MAX;
		long lg = gss ? report_summary_limit(gss) : LONG_MAX;

		sc.rows_limit = (la < lg ? la : lg) - SUMMARY_HEADER;
		if (sc.rows_limit < SUMMARY_RESERVE)
			sc.rows_limit = SUMMARY_RESERVE; /* write_summary says it is full */
	}
	if (ctx->json)
		printf("{\"leases\":[");
	else
		printf("%-30s %-9s %-24s %-20s %s\n", "NAME", "PHASE", "OWNER", "EXPIRES_AT",
		       "ANOMALIES");
	/* streamed: each lease printed as it is done and freed (issue 29) */
	rc = lease_reconcile_each(&rep, st, &a.o, stream_visit, &sc);
	if (tty && rep.count >= PROGRESS_MIN)
		fprintf(stderr, "\r\033[K");
	scanned = rep.count;
	sc.nbudgets = lease_store_budgets(st, sc.budgets, LEASE_BUDGET_MAX);
	if (rc < 0) {
		if (ctx->json)
			printf("]}\n"); /* the partial object stays valid JSON */
		fflush(stdout);
		status = cli_status_of(cli_fail(ctx, rc, "%s", lease_store_last_error(st)));
		goto done;
	}
	if (ctx->json) {
		json_t *tail = report_json(&rep, scanned, &sc);
		char *txt =
		        tail ? json_dumps(tail, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII)
		             : NULL;

		json_decref(tail);
		printf("],%s\n", txt ? txt + 1 : "\"error\":\"out of memory\"}");
		free(txt);
		fflush(stdout);
	} else {
		print_human_footer(&rep, scanned);
	}
	status = a.fail_on != LEASE_SEV_NEVER && lease_reconcile_highest(&rep) >= a.fail_on &&
	                         lease_reconcile_highest(&rep) != LEASE_SEV_OK
	                 ? EXIT_FOUND
	                 : EXIT_OK;
	if ((rc = actions_status(ctx, &sc)) != EXIT_OK)
		status = rc; /* a failed action outranks what was found (1) */
	if (a.summary && (rc = write_summary(ctx, a.summary, &rep, scanned, &sc)) < 0)
		status = cli_status_of(rc);
	if (report_github_actions()) {
		if (gss && (!a.summary || strcmp(a.summary, gss) != 0) &&
		    (rc = write_summary(ctx, gss, &rep, scanned, &sc)) < 0 && status == EXIT_OK)
			status = cli_status_of(rc);
		annotate_more(&sc);
	}
done:
	md_free(&sc.rows);
	md_free(&sc.row);
	json_decref(sc.reaped);
	json_decref(sc.skipped);
	json_decref(sc.pruned);
	json_decref(sc.locks);
	lease_reconcile_report_free(&rep);
	return status;
}

/* ---- history -------------------------------------------------------------------------- */

static json_t *history_item_json(const lease_history_item *it)
{
	char t[LEASE_TIME_STRSZ + 1];
	json_t *o = json_object();

	json_object_set_new(o, "oid", oid_json(1, &it->oid));
	lease_time_format(t, it->commit_time);
	json_object_set_new(o, "commit_time", it->is_commit ? json_string(t) : json_null());
	json_object_set_new(o, "op", json_string(lease_op_name(it->op)));
	if (it->payload_rc != 0) {
		json_object_set_new(o, "error",
		                    json_pack("{s:s, s:s}", "code", lease_error_id(it->payload_rc),
		                              "message", it->payload_error));
		return o;
	}
	/* the token is omitted: history is shown to non-holders too (protocol.md §2) */
	json_object_set_new(o, "lease", cli_payload_json(&it->payload, 0, it->commit_time));
	json_object_del(json_object_get(o, "lease"), "expires_in");
	if (it->has_hb_time) {
		lease_time_format(t, it->hb_time);
		json_object_set_new(o, "heartbeat_time", json_string(t));
		json_object_set_new(o, "heartbeat_method",
		                    json_string(lease_hb_method_name(it->hb_method)));
		if (it->hb_method == LEASE_HB_APPROXIMATE)
			json_object_set_new(o, "assumed_ttl_seconds",
			                    json_integer(it->assumed_ttl));
	}
	json_object_set_new(o, "is_heartbeat", json_boolean(it->is_heartbeat));
	if (it->has_interval) {
		json_object_set_new(o, "interval_seconds", json_integer(it->interval_seconds));
		json_object_set_new(o, "interval_method",
		                    json_string(lease_hb_method_name(it->interval_method)));
	}
	if (it->has_wait) { /* a fair waiter's acquire: who waited how long (§5) */
		json_t *w;

		lease_time_format(t, it->payload.queued_at);
		w = json_pack("{s:s, s:s, s:s, s:I}", "owner", it->payload.owner, "host",
		              it->payload.host, "queued_at", t, "waited_seconds",
		              (json_int_t)it->waited_seconds);
		if (w && it->payload.queue_position > 0)
			json_object_set_new(w, "queue_position",
			                    json_integer((json_int_t)it->payload.queue_position));
		json_object_set_new(o, "fair_wait", w);
	}
	return o;
}

static void print_history_human(const lease_history *h)
{
	char hex[LEASE_OID_HEXSZ + 1], t[LEASE_TIME_STRSZ + 1], e[LEASE_TIME_STRSZ + 1];
	char own[LEASE_IDENT_MAX + 1], host[LEASE_IDENT_MAX + 1], msg[300];
	size_t i;

	for (i = 0; i < h->count; i++) {
		const lease_history_item *it = &h->items[i];

		lease_oid_tohex(hex, &it->oid);
		lease_time_format(t, it->commit_time);
		if (it->payload_rc != 0) {
			printf("%.12s %s %-10s unreadable: %s\n", hex, it->is_commit ? t : "-",
			       lease_op_name(it->op),
			       report_clean(msg, sizeof(msg), it->payload_error));
			continue;
		}
		lease_time_format(e, it->payload.expires_at);
		printf("%.12s %s %-10s %-9s gen %lld by %s on %s, expires %s", hex, t,
		       lease_op_name(it->op), lease_phase_name(it->payload.phase),
		       (long long)it->payload.transitions,
		       report_clean(own, sizeof(own), it->payload.owner),
		       report_clean(host, sizeof(host), it->payload.host), e);
		if (it->payload.has_ttl)
			printf(", ttl %llds", (long long)it->payload.ttl_seconds);
		else
			printf(", pre-bump %s", it->payload.sdlc_version);
		/* signed once: "+12s", "-5971s" (a heartbeat time before its
		 * parent's: clock skew), never "+-5971s" (issue 23) */
		if (it->has_interval)
			printf(", heartbeat %+llds (%s%s)", (long long)it->interval_seconds,
			       lease_hb_method_name(it->interval_method),
			       it->interval_method == LEASE_HB_APPROXIMATE ? ", TTL assumed" : "");
		if (it->payload.has_heartbeats && it->payload.heartbeats > 1)
			printf(", %lld heartbeats (earlier ones replaced)",
			       (long long)it->payload.heartbeats);
		if (it->has_wait) {
			lease_time_format(e, it->payload.queued_at);
			printf(", waited %llds in the queue since %s",
			       (long long)it->waited_seconds, e);
			if (it->payload.queue_position > 0)
				printf(" (position %lld at entry)",
				       (long long)it->payload.queue_position);
		}
		printf("\n");
	}
	if (h->truncated)
		printf("(older entries not shown: --max)\n");
}

static int history_opt(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	return reconcile_opt(ctx, c, arg, payload);
}

static const struct option history_longopts[] = {
        {"max", required_argument, NULL, OPT_MAX},
        {"assumed-ttl", required_argument, NULL, OPT_ASSUMED_TTL},
        CLI_GLOBAL_LONGOPTS,
        {NULL, 0, NULL, 0}};

static int cmd_history(cli_ctx *ctx, int argc, char **argv)
{
	lease_reconcile_options defaults = LEASE_RECONCILE_OPTIONS_INIT;
	reconcile_args a;
	lease_history h;
	lease_store *st;
	const char *name;
	char ref[LEASE_NAME_MAX + LEASE_NS_MAX + 8];
	json_t *items;
	size_t k;
	int i, rc;

	memset(&a, 0, sizeof(a));
	a.o = defaults;
	/* permuting, like the lease commands: options may follow NAME; "--" ends them */
	if ((i = cli_parse(ctx, argc, argv, "vqh", history_longopts, history_opt, &a)) < 0)
		return cli_status_of(i);
	if ((rc = cli_take_name(ctx, argc, argv, i, &name)) < 0)
		return cli_status_of(rc);
	if ((rc = cli_open_store(ctx, &st)) < 0)
		return cli_status_of(rc);
	rc = lease_history_read(&h, st, name, (size_t)a.max_items, a.o.default_ttl);
	if (rc < 0) {
		lease_history_free(&h);
		return cli_status_of(cli_fail(ctx, rc, "%s", lease_store_last_error(st)));
	}
	snprintf(ref, sizeof(ref), "refs/%s/%s", lease_store_namespace(st), name);
	if (ctx->json) {
		items = json_array();
		for (k = 0; k < h.count; k++)
			json_array_append_new(items, history_item_json(&h.items[k]));
		cli_emit_json(stdout, json_pack("{s:s, s:s, s:b, s:o, s:b}", "name", name, "ref",
		                                ref, "present", h.present, "items", items,
		                                "truncated", h.truncated));
	} else if (!h.present) {
		printf("%s: absent (no %s)\n", name, ref);
	} else {
		print_history_human(&h);
	}
	lease_history_free(&h);
	return EXIT_OK;
}

const cli_command cli_reconcile_commands[] = {
        {"history", cmd_history, "history NAME [--max N] [--assumed-ttl S]",
         "Show every payload the lease ever had, newest first, with heartbeat intervals and the "
         "method used (exact, or approximate for pre-bump payloads), and how long each fair "
         "waiter (acquire --fair) waited in the queue.",
         "  --max N              show at most N entries (1..100000000)\n"
         "  --assumed-ttl S      TTL assumed for pre-bump payloads (default 300)\n",
         history_longopts},
        {"reconcile", cmd_reconcile,
         "reconcile [--reap] [--prune-released DAYS] [--fail-on LEVEL] [--summary FILE] "
         "[--grace S] [--assumed-ttl S]",
         "Sweep the namespace and report anomalies (protocol.md §7); optionally reap expired "
         "leases and prune released ones.",
         "  --reap                 release leases expired by more than max(grace, skew margin)\n"
         "                         (a CAS: a concurrent heartbeat wins) and remove stale ref "
         "locks;\n"
         "                         an action that fails sets the exit status (e.g. 77, 75)\n"
         "  --prune-released DAYS  archive (refs/<ns>-archive/...) and delete leases released\n"
         "                         at least DAYS days ago\n"
         "  --fail-on LEVEL        exit 1 when an anomaly at or above LEVEL is found:\n"
         "                         error (default), warning, info, never\n"
         "  --summary FILE         append a markdown summary to FILE (also $GITHUB_STEP_SUMMARY\n"
         "                         when GITHUB_ACTIONS=true; annotations then go to stderr);\n"
         "                         checked before anything is read or written (exit 78)\n"
         "  --grace S              expiry grace, seconds (default: the store's skew margin)\n"
         "  --assumed-ttl S        TTL assumed for pre-bump payloads (default 300)\n",
         reconcile_longopts},
        {NULL, NULL, NULL, NULL, NULL, NULL}};
