/* reconcile and history (protocol.md §6, §7; cli.md): the sweep's human table,
 * --json object, markdown job summary, GitHub annotations and exit status;
 * a lease's history. */
#define _DEFAULT_SOURCE /* fileno, isatty */
#include "cli.h"

#include <errno.h>
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

static json_t *report_json(const lease_reconcile_report *r)
{
	json_t *leases = json_array(), *reaped = json_array(), *skipped = json_array(),
	       *pruned = json_array(), *locks = json_array(), *top;
	char now[LEASE_TIME_STRSZ + 1];
	size_t i, k;

	for (i = 0; i < r->count; i++) {
		const lease_reconcile_entry *e = &r->entries[i];
		char exp[LEASE_TIME_STRSZ + 1];
		json_t *an = json_array(), *o;

		for (k = 0; k < e->anomaly_count; k++)
			json_array_append_new(an, anomaly_json(&e->anomalies[k]));
		if (e->has_payload)
			lease_time_format(exp, e->payload.expires_at);
		o = json_pack("{s:s, s:o, s:s?, s:s?, s:s?, s:o}", "name", e->name, "oid",
		              oid_json(e->present, &e->oid), "phase",
		              e->has_payload ? lease_phase_name(e->payload.phase) : NULL, "owner",
		              e->has_payload ? e->payload.owner : NULL, "expires_at",
		              e->has_payload ? exp : NULL, "anomalies", an);
		json_array_append_new(leases, o);
		if (e->action == LEASE_ACTION_REAPED)
			json_array_append_new(reaped,
			                      json_pack("{s:s, s:o, s:o}", "name", e->name, "oid",
			                                oid_json(1, &e->oid), "released_oid",
			                                oid_json(1, &e->action_oid)));
		else if (e->action == LEASE_ACTION_PRUNED)
			json_array_append_new(pruned, json_pack("{s:s, s:o, s:s}", "name", e->name,
			                                        "oid", oid_json(1, &e->oid),
			                                        "archive_ref", e->archive_ref));
		else if (e->action == LEASE_ACTION_SKIPPED)
			json_array_append_new(
			        skipped, json_pack("{s:s, s:o, s:s, s:s, s:s}", "name", e->name,
			                           "oid", oid_json(e->present, &e->oid), "action",
			                           e->action_kind ? e->action_kind : "?", "reason",
			                           e->action_message ? e->action_message : "",
			                           "code", lease_error_id(e->action_code)));
		if (e->lock_removed)
			json_array_append_new(locks, json_string(e->name));
	}
	lease_time_format(now, r->now);
	top = json_pack("{s:s, s:I, s:s, s:I, s:o, s:{s:I, s:I, s:I, s:I}, s:o, s:o, s:o, s:o}",
	                "namespace", r->ns, "scanned", (json_int_t)r->count, "now", now,
	                "grace_seconds", (json_int_t)r->grace_seconds, "leases", leases, "counts",
	                "ok", (json_int_t)r->counts[LEASE_SEV_OK], "info",
	                (json_int_t)r->counts[LEASE_SEV_INFO], "warning",
	                (json_int_t)r->counts[LEASE_SEV_WARNING], "error",
	                (json_int_t)r->counts[LEASE_SEV_ERROR], "reaped", reaped, "skipped",
	                skipped, "pruned", pruned, "locks_removed", locks);
	if (top)
		json_object_set_new(top, "tickets_removed",
		                    json_integer((json_int_t)r->tickets_removed));
	/* writes made: how long they were paced (GitHub asks >= 1 s in bursts) */
	if (top && (r->reaped || r->pruned || r->skipped || r->paced_ms))
		json_object_set_new(top, "paced_seconds", json_real((double)r->paced_ms / 1000.0));
	return top;
}

/* ---- human table ---------------------------------------------------------------------- */

static void print_human(const lease_reconcile_report *r)
{
	char now[LEASE_TIME_STRSZ + 1], buf[LEASE_IDENT_MAX + 1], msg[400];
	size_t i, k;

	lease_time_format(now, r->now);
	printf("%-30s %-9s %-24s %-20s %s\n", "NAME", "PHASE", "OWNER", "EXPIRES_AT", "ANOMALIES");
	for (i = 0; i < r->count; i++) {
		const lease_reconcile_entry *e = &r->entries[i];
		char exp[LEASE_TIME_STRSZ + 1] = "-";

		if (e->has_payload)
			lease_time_format(exp, e->payload.expires_at);
		printf("%-30s %-9s %-24s %-20s ", report_clean(msg, 200, e->name),
		       e->has_payload ? lease_phase_name(e->payload.phase) : "?",
		       e->has_payload ? report_clean(buf, sizeof(buf), e->payload.owner) : "?",
		       exp);
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
			       report_clean(msg, sizeof(msg),
			                    e->action_message ? e->action_message : ""));
		if (e->lock_removed)
			printf("    stale ref lock removed\n");
		if (e->tickets_removed)
			printf("    stale tickets removed: %zu\n", e->tickets_removed);
	}
	printf("\nscanned %zu in refs/%s/ at %s: %zu ok, %zu info, %zu warning, %zu error",
	       r->count, r->ns, now, r->counts[LEASE_SEV_OK], r->counts[LEASE_SEV_INFO],
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

/* Render the summary, keeping it below @p limit bytes with an "N more" line. */
static void render_summary(mdbuf *b, const lease_reconcile_report *r, long limit)
{
	char now[LEASE_TIME_STRSZ + 1];
	size_t i, shown = 0, listed = 0, more = 0;
	mdbuf row = {NULL, 0, 0};

	lease_time_format(now, r->now);
	md_printf(b, "## reflease reconcile: refs/%s/\n\n", r->ns);
	md_printf(b, "Scanned **%zu** leases at %s: %zu ok, %zu info, %zu warning, %zu error.",
	          r->count, now, r->counts[LEASE_SEV_OK], r->counts[LEASE_SEV_INFO],
	          r->counts[LEASE_SEV_WARNING], r->counts[LEASE_SEV_ERROR]);
	if (r->reaped || r->pruned || r->skipped || r->locks_removed)
		md_printf(b, " Reaped %zu, pruned %zu, skipped %zu, stale locks removed %zu.",
		          r->reaped, r->pruned, r->skipped, r->locks_removed);
	if (r->paced_ms > 0)
		md_printf(b,
		          " Writes paced %.1f s (GitHub asks for >= 1 s between them in bursts).",
		          (double)r->paced_ms / 1000.0);
	md_put(b, "\n\n", 2);
	for (i = 0; i < r->count; i++)
		if (r->entries[i].anomaly_count || r->entries[i].action != LEASE_ACTION_NONE)
			listed++;
	if (!listed) {
		md_printf(b, "%s", "No anomalies.\n");
		return;
	}
	md_printf(b, "%s",
	          "| lease | phase | owner | expires_at | anomalies |\n|---|---|---|---|---|\n");
	for (i = 0; i < r->count; i++) {
		const lease_reconcile_entry *e = &r->entries[i];

		if (!e->anomaly_count && e->action == LEASE_ACTION_NONE)
			continue;
		row.len = 0;
		md_row(&row, e);
		/* keep room for the closing "N more" line */
		if (!md_append_capped(b, &row, SUMMARY_RESERVE, limit)) {
			more = listed - shown;
			break;
		}
		shown++;
	}
	md_free(&row);
	if (more)
		md_printf(b,
		          "\n_%zu more leases with anomalies not shown (summary kept under 1 MiB; "
		          "run `reflease reconcile --json` for all)._\n",
		          more);
}

static int write_summary(cli_ctx *ctx, const char *path, const lease_reconcile_report *r)
{
	mdbuf b = {NULL, 0, 0};
	long limit = report_summary_limit(path);
	int rc;

	if (limit < 1024) {
		fprintf(stderr, "reflease reconcile: %s is nearly full; summary not written\n",
		        path);
		return 0;
	}
	render_summary(&b, r, limit);
	/* a failed write or close leaves what was written, as a partial summary */
	if ((rc = report_write_summary(path, "a", &b)) < 0) {
		md_free(&b);
		return cli_fail(ctx, LEASE_ECONFIG, "cannot %s the summary %s: %s",
		                rc == REPORT_EOPEN ? "open" : "write", path, strerror(errno));
	}
	md_free(&b);
	return 0;
}

/* ---- GitHub annotations --------------------------------------------------------------- */

static void annotate(const lease_reconcile_report *r)
{
	report_annotations ann;
	char title[1024], text[1024], what[64];
	size_t i, k;
	int s;

	memset(&ann, 0, sizeof(ann));
	for (i = 0; i < r->count; i++) {
		const lease_reconcile_entry *e = &r->entries[i];

		for (k = 0; k < e->anomaly_count; k++) {
			const lease_anomaly *a = &e->anomalies[k];
			lease_severity sev =
			        a->severity > LEASE_SEV_ERROR ? LEASE_SEV_ERROR : a->severity;

			snprintf(title, sizeof(title), "reflease reconcile: refs/%s/%s", r->ns,
			         e->name);
			snprintf(text, sizeof(text), "%s %s: %s", e->name,
			         lease_anomaly_name(a->id), a->message);
			report_annotate(&ann, sev, title, text, 0);
		}
	}
	for (s = LEASE_SEV_ERROR; s >= LEASE_SEV_INFO; s--) {
		snprintf(what, sizeof(what), "%s anomalies not annotated",
		         lease_severity_name((lease_severity)s));
		report_annotate_more(&ann, (lease_severity)s, "reflease reconcile", what);
	}
	fflush(stderr);
}

/* ---- failed actions ------------------------------------------------------------------- */

/* The exit status of the actions: 0, or that of the first one due but not done
 * for a failure (a write refused, unreachable, unverified); a concurrent write
 * that won (LEASE_ECAS) is the CAS doing its job, not a failure. */
static int actions_status(cli_ctx *ctx, const lease_reconcile_report *r)
{
	const lease_reconcile_entry *first = NULL;
	char msg[400];
	size_t i, failed = 0;

	for (i = 0; i < r->count; i++) {
		const lease_reconcile_entry *e = &r->entries[i];

		if (e->action != LEASE_ACTION_SKIPPED || e->action_code == LEASE_ECAS)
			continue;
		if (!failed++)
			first = e;
	}
	if (!failed)
		return EXIT_OK;
	fprintf(stderr,
	        "reflease %s: %zu action(s) failed; first: %s %s: %s (exit %d; see the "
	        "skipped list)\n",
	        ctx->command, failed, first->action_kind ? first->action_kind : "action",
	        first->name,
	        report_clean(msg, sizeof(msg), first->action_message ? first->action_message : "?"),
	        cli_exit_for(first->action_code));
	return cli_exit_for(first->action_code);
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

static int cmd_reconcile(cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"reap", no_argument, NULL, OPT_REAP},
	        {"prune-released", required_argument, NULL, OPT_PRUNE},
	        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
	        {"summary", required_argument, NULL, OPT_SUMMARY},
	        {"grace", required_argument, NULL, OPT_GRACE},
	        {"assumed-ttl", required_argument, NULL, OPT_ASSUMED_TTL},
	        CLI_GLOBAL_LONGOPTS,
	        {NULL, 0, NULL, 0}};
	lease_reconcile_options defaults = LEASE_RECONCILE_OPTIONS_INIT;
	lease_reconcile_report rep;
	reconcile_args a;
	lease_store *st;
	const char *gss;
	int i, rc, tty, status;

	memset(&a, 0, sizeof(a));
	a.o = defaults;
	a.fail_on = LEASE_SEV_ERROR;
	if ((i = cli_parse(ctx, argc, argv, CLI_GLOBAL_SHORTOPTS, longopts, reconcile_opt, &a)) < 0)
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
	rc = lease_reconcile(&rep, st, &a.o);
	if (tty && rep.count >= PROGRESS_MIN)
		fprintf(stderr, "\r\033[K");
	if (rc < 0) {
		lease_reconcile_report_free(&rep);
		return cli_status_of(cli_fail(ctx, rc, "%s", lease_store_last_error(st)));
	}
	if (ctx->json)
		cli_emit_json(stdout, report_json(&rep));
	else
		print_human(&rep);
	status = a.fail_on != LEASE_SEV_NEVER && lease_reconcile_highest(&rep) >= a.fail_on &&
	                         lease_reconcile_highest(&rep) != LEASE_SEV_OK
	                 ? EXIT_FOUND
	                 : EXIT_OK;
	if ((rc = actions_status(ctx, &rep)) != EXIT_OK)
		status = rc; /* a failed action outranks what was found (1) */
	if (a.summary && (rc = write_summary(ctx, a.summary, &rep)) < 0)
		status = cli_status_of(rc);
	if (report_github_actions()) {
		if (gss && (!a.summary || strcmp(a.summary, gss) != 0) &&
		    (rc = write_summary(ctx, gss, &rep)) < 0 && status == EXIT_OK)
			status = cli_status_of(rc);
		annotate(&rep);
	}
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
		printf("\n");
	}
	if (h->truncated)
		printf("(older entries not shown: --max)\n");
}

static int history_opt(cli_ctx *ctx, int c, const char *arg, void *payload)
{
	return reconcile_opt(ctx, c, arg, payload);
}

static int cmd_history(cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"max", required_argument, NULL, OPT_MAX},
	        {"assumed-ttl", required_argument, NULL, OPT_ASSUMED_TTL},
	        CLI_GLOBAL_LONGOPTS,
	        {NULL, 0, NULL, 0}};
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
	if ((i = cli_parse(ctx, argc, argv, "vqh", longopts, history_opt, &a)) < 0)
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
         "method used (exact, or approximate for pre-bump payloads).",
         "  --max N              show at most N entries (1..100000000)\n"
         "  --assumed-ttl S      TTL assumed for pre-bump payloads (default 300)\n"},
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
         "  --assumed-ttl S        TTL assumed for pre-bump payloads (default 300)\n"},
        {NULL, NULL, NULL, NULL, NULL}};
