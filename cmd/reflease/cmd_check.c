/* reflease check (issue 40 item 7; cli.md "check"): a self-check of a store
 * on scratch leases, the properties exclusion rests on for that store
 * (protocol.md §3, §4, "Sets"), each printed pass, fail or skip; everything
 * written is deleted again. The first thing to run against a new GHES or git
 * server. */
#include "cli.h"

#include "reflease/primitives.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The scratch leases: "reflease-check-<hex>-<k>" (k = 1..CHECK_REFS). */
#define CHECK_REFS 3

typedef struct check_run {
	cli_ctx *ctx;
	lease_store *st;
	char names[CHECK_REFS][LEASE_NAME_MAX + 1];
	int made[CHECK_REFS]; /* written: deleted at the end */
	lease_oid a, b, c;    /* scratch commits: b and c are children of a */
	json_t *items;        /* --json */
	int failed;
} check_run;

static void report(check_run *cr, const char *prop, const char *result, const char *detail)
{
	if (strcmp(result, "fail") == 0)
		cr->failed++;
	if (cr->ctx->json)
		json_array_append_new(cr->items, json_pack("{s:s, s:s, s:s}", "property", prop,
		                                           "result", result, "detail", detail));
	else
		printf("%-4s %-22s %s\n",
		       strcmp(result, "pass") == 0   ? "ok"
		       : strcmp(result, "skip") == 0 ? "skip"
		                                     : "FAIL",
		       prop, detail);
}

/* The ref @p k reads @p want now (1), another value or absent (0). */
static int reads(check_run *cr, int k, const lease_oid *want)
{
	return lease_ref_still_at(cr->st, cr->names[k], want) == 1;
}

/* token-can-write: commits and a ref created (a 403/401 here is the token). */
static int check_write(check_run *cr)
{
	char d[1024];
	int rc;

	if ((rc = lease_write_commit(&cr->a, cr->st, NULL, "reflease check: scratch\n")) == 0 &&
	    (rc = lease_write_commit(&cr->b, cr->st, &cr->a, "reflease check: b\n")) == 0 &&
	    (rc = lease_write_commit(&cr->c, cr->st, &cr->a, "reflease check: c\n")) == 0 &&
	    (rc = lease_cas_create(cr->st, cr->names[0], &cr->a)) == 0) {
		cr->made[0] = 1;
		snprintf(d, sizeof(d), "created %s", cr->names[0]);
		report(cr, "token-can-write", "pass", d);
		return 0;
	}
	snprintf(d, sizeof(d), "%s: %s", lease_error_id(rc), lease_store_last_error(cr->st));
	report(cr, "token-can-write", "fail", d);
	return rc;
}

/* cas-stale-rejected: a replace from an oid the ref no longer holds must
 * change nothing (on GitHub: updateRefs with force:true and a stale
 * beforeOid, protocol.md §9). */
static void check_cas(check_run *cr)
{
	const char *how = strcmp(lease_store_kind(cr->st), "github") == 0
	                          ? "updateRefs with force:true and a stale beforeOid"
	                          : "a replace from a stale expected oid";
	char d[1024];
	int rc;

	if ((rc = lease_cas_replace(cr->st, cr->names[0], &cr->a, &cr->b)) != 0) {
		snprintf(d, sizeof(d), "a replace from the current oid failed: %s: %s",
		         lease_error_id(rc), lease_store_last_error(cr->st));
		report(cr, "cas-stale-rejected", "fail", d);
		return;
	}
	rc = lease_cas_replace(cr->st, cr->names[0], &cr->a, &cr->c);
	if (rc == LEASE_ECAS && reads(cr, 0, &cr->b)) {
		snprintf(d, sizeof(d), "%s was refused; the ref kept its value", how);
		report(cr, "cas-stale-rejected", "pass", d);
	} else {
		snprintf(d, sizeof(d),
		         "%s was %s: the store does not compare, and two writers could both "
		         "take a lease",
		         how, rc == 0 || reads(cr, 0, &cr->c) ? "applied" : "not refused cleanly");
		report(cr, "cas-stale-rejected", "fail", d);
	}
}

/* multi-ref-atomic: a set write whose second compare fails writes nothing. */
static void check_set(check_run *cr)
{
	const char *names[2] = {cr->names[1], cr->names[2]};
	lease_oid zero[2], olds[2], news[2];
	char d[1024];
	int rc;

	if (!lease_store_can_write_set(cr->st)) {
		report(cr, "multi-ref-atomic", "skip",
		       "this store cannot write several refs atomically: reflease refuses sets "
		       "here (exit 78)");
		return;
	}
	memset(zero, 0, sizeof(zero));
	news[0] = news[1] = cr->a;
	if ((rc = lease_cas_set(cr->st, names, zero, news, 2)) != 0) {
		snprintf(d, sizeof(d), "creating two refs in one write failed: %s: %s",
		         lease_error_id(rc), lease_store_last_error(cr->st));
		report(cr, "multi-ref-atomic", "fail", d);
		return;
	}
	cr->made[1] = cr->made[2] = 1;
	olds[0] = cr->a;
	olds[1] = cr->c; /* stale: the second ref holds a */
	news[0] = news[1] = cr->b;
	rc = lease_cas_set(cr->st, names, olds, news, 2);
	if (rc == LEASE_ECAS && reads(cr, 1, &cr->a) && reads(cr, 2, &cr->a))
		report(cr, "multi-ref-atomic", "pass",
		       "a two-ref write with one stale compare wrote neither ref");
	else
		report(cr, "multi-ref-atomic", "fail",
		       reads(cr, 1, &cr->b)
		               ? "a two-ref write with one stale compare wrote the other "
		                 "ref: a set could be held in part"
		               : "a two-ref write with one stale compare was not refused "
		                 "cleanly");
}

/* clock-skew: the store's clock against this host's, within the margin. */
static void check_clock(check_run *cr)
{
	int64_t d = lease_store_now(cr->st) - (int64_t)time(NULL);
	int margin = lease_store_skew_margin(cr->st);
	char msg[256];

	if (d < 0)
		d = -d;
	/* one second of rounding: the store's clock is read in whole seconds */
	snprintf(msg, sizeof(msg), "the store's clock is %lld s from this host's (margin %d s)",
	         (long long)d, margin);
	report(cr, "clock-skew", d <= margin + 1 ? "pass" : "fail", msg);
}

/* Delete every scratch ref made, from the value it reads. */
static void cleanup(check_run *cr)
{
	lease_ref_state s;
	char d[1024];
	int k, left = 0;

	for (k = 0; k < CHECK_REFS; k++) {
		if (!cr->made[k])
			continue;
		memset(&s, 0, sizeof(s));
		if (lease_fetch_ref(&s, cr->st, cr->names[k]) < 0 ||
		    (s.present && lease_cas_delete(cr->st, cr->names[k], &s.oid) < 0))
			left++;
		lease_ref_state_clear(&s);
	}
	if (left) {
		snprintf(d, sizeof(d), "%d scratch lease(s) reflease-check-* left: %s", left,
		         lease_store_last_error(cr->st));
		report(cr, "cleanup", "fail", d);
	} else {
		report(cr, "cleanup", "pass", "every scratch lease deleted");
	}
}

static const struct option check_longopts[] = {CLI_GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};

static int cmd_check(cli_ctx *ctx, int argc, char **argv)
{
	check_run cr;
	char hex[17];
	int i, k, rc;

	if ((i = cli_parse(ctx, argc, argv, "vqh", check_longopts, NULL, NULL)) < 0)
		return cli_status_of(i);
	if (i < argc)
		return cli_status_of(cli_usage(ctx, "unexpected argument '%s'", argv[i]));
	memset(&cr, 0, sizeof(cr));
	cr.ctx = ctx;
	if ((rc = cli_open_store(ctx, &cr.st)) < 0)
		return cli_status_of(rc);
	if ((rc = lease_random_hex(hex, 8, lease_store_random(cr.st))) < 0)
		return cli_status_of(cli_fail(ctx, rc, "no randomness for the scratch names"));
	for (k = 0; k < CHECK_REFS; k++)
		snprintf(cr.names[k], sizeof(cr.names[k]), "reflease-check-%s-%d", hex, k + 1);
	cr.items = json_array();
	if (!ctx->json)
		printf("checking %s store %s (scratch leases reflease-check-%s-*)\n",
		       lease_store_kind(cr.st), ctx->store_spec ? ctx->store_spec : "", hex);
	if (check_write(&cr) == 0) {
		check_cas(&cr);
		check_set(&cr);
	}
	check_clock(&cr);
	cleanup(&cr);
	if (ctx->json)
		cli_emit_json(stdout,
		              json_pack("{s:s, s:s, s:o}", "status", cr.failed ? "fail" : "pass",
		                        "store", lease_store_kind(cr.st), "checks", cr.items));
	else {
		json_decref(cr.items);
		printf("%s\n", cr.failed ? "check: FAILED" : "check: every property holds");
	}
	return cr.failed ? EXIT_FOUND : EXIT_OK;
}

const cli_command cli_check_commands[] = {
        {"check", cmd_check, "check",
         "Check a store: CAS refuses a stale oid, multi-ref writes are all-or-nothing, the "
         "store's clock, the token can write (scratch leases, deleted after).",
         "  each property is printed ok, FAIL or skip; exit 1 when one fails (cli.md "
         "\"check\")\n",
         check_longopts},
        {NULL, NULL, NULL, NULL, NULL, NULL}};
