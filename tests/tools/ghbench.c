/* Request budget of the GitHub backend (issue 6 acceptance), counted at the
 * fake GitHub server (tests/support/fakegh.c) and printed as a table by
 * `make bench-github` (part of `make bench`). Not a timed test: it reports
 * how many API requests each operation spends, against the budget.
 *
 *   ghbench [N]    N = leases in the reconcile sweep (default 250) */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reflease.h"
#include "store/backend.h"
#include "store/handle.h"
#include "support/fakegh.h"
#include "tools/tool_gh.h"

static fakegh *fk;
static int over;
static const char *api_url; /* the fake GitHub the stores open on */

static lease_store *open_gh(void)
{
	return tool_open_gh("ghbench", api_url, "ghbench-token", 10);
}

static void row(const char *what, unsigned n, unsigned budget)
{
	printf("%-52s %8u %8u%s\n", what, n, budget, n > budget ? "  over" : "");
	if (n > budget)
		over++;
}

/* The heartbeat service (`heartbeat --every`, `run`): a store clock that the
 * service's sleeps advance, so every heartbeat is due without waiting. */
static int64_t keep_offset;
static int keep_writes;
static unsigned keep_requests;
static volatile sig_atomic_t keep_stop;

static int64_t keep_now(void *payload)
{
	(void)payload;
	return (int64_t)time(NULL) + keep_offset;
}

static int keep_sleep(double seconds, void *payload)
{
	(void)payload;
	keep_offset += (int64_t)seconds + 1;
	return keep_stop != 0;
}

static void keep_report(const lease_keep_report *rep, void *payload)
{
	(void)payload;
	if (rep->event != LEASE_KEEP_WRITE) {
		keep_stop = 1;
		return;
	}
	/* requests of the heartbeat that just landed, the first one excepted */
	if (++keep_writes >= 2)
		keep_requests = fakegh_count(fk, FAKEGH_ANY);
	fakegh_reset_counts(fk);
	if (keep_writes >= 3)
		keep_stop = 1;
}

/* The keeper's requests per heartbeat: of one lease (@p n 1), or of a set
 * of @p n (run A B C -- CMD, issue 27: one set write per heartbeat). */
static int keep_row(size_t n)
{
	static const char *const one[] = {"bench-keep"};
	static const char *const set[] = {"bench-keep-a", "bench-keep-b", "bench-keep-c"};
	const char *const *names = n == 1 ? one : set;
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_op_options ao = LEASE_OP_OPTIONS_INIT;
	lease_keep_options ko = LEASE_KEEP_OPTIONS_INIT;
	lease_set_result *sr = calloc(1, sizeof(*sr));
	lease_store *st = NULL;
	lease_result r, last;
	char err[512];
	int rc = 1;

	keep_writes = 0;
	keep_stop = 0;
	so.github_api_url = api_url;
	so.github_token = "ghbench-token";
	so.timeout_s = 10;
	so.clock.now = keep_now;
	if (!sr || lease_store_open(&st, "github:octo/leases", &so, err, sizeof(err)) < 0) {
		fprintf(stderr, "ghbench: keeper's store: %s\n", sr ? err : "out of memory");
		goto out;
	}
	ao.owner = "keeper";
	ao.host = "bench";
	ao.ttl_seconds = 300;
	if (n == 1 ? lease_acquire(&r, st, names[0], &ao) < 0
	           : lease_acquire_set(sr, st, names, n, &ao) < 0) {
		fprintf(stderr, "ghbench: keeper's acquire: %s\n", lease_store_last_error(st));
		goto out;
	}
	if (n > 1)
		r = sr->members[0];
	ko.owner = "keeper";
	ko.host = "bench";
	ko.lease_token = r.payload.lease_token;
	ko.ttl_seconds = 300;
	ko.known_expires_at = r.payload.expires_at;
	ko.known_ttl_seconds = 300;
	ko.known_now = r.now;
	ko.sleep = keep_sleep;
	ko.report = keep_report;
	ko.stop = &keep_stop;
	fakegh_reset_counts(fk);
	if (n == 1)
		lease_keep(&last, st, names[0], &ko);
	else if (lease_keep_set(&last, st, names, n, &ko) < 0)
		fprintf(stderr, "ghbench: set keeper: %s\n", lease_store_last_error(st));
	if (keep_writes < 3) {
		fprintf(stderr, "ghbench: the keeper stopped after %d heartbeats\n", keep_writes);
		goto out;
	}
	if (n == 1)
		row("heartbeat (each later one in heartbeat --every / run)", keep_requests, 3);
	else
		row("set heartbeat, 3 leases (each later one in run A B C)", keep_requests,
		    (unsigned)n + 3);
	rc = 0;
out:
	lease_store_free(st);
	free(sr);
	return rc;
}

/* A set of 3 leases (issue 27, protocol.md "Sets"): acquired fresh, heartbeat
 * (due: a store clock 200 s on), transition, release, acquired again once
 * released. Budget k + 3 for k leases: one read of every member (one GraphQL
 * query), k commits, one updateRefs mutation, one verifying read of every
 * member; k + 4 on fresh names (the REST listing that confirms GraphQL's
 * nulls, as a single fresh acquire pays it: 5 = 1 + 4). */
static int64_t set_offset;
static int64_t set_now(void *payload)
{
	(void)payload;
	return (int64_t)time(NULL) + set_offset;
}

typedef int (*set_fn)(lease_set_result *, lease_store *, const char *const *, size_t,
                      const lease_op_options *);

static int set_row(const char *what, set_fn fn, const lease_op_options *o, const char *want,
                   lease_set_result *r, unsigned budget)
{
	static const char *const names[] = {"set-a", "set-b", "set-c"};
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char err[512];
	int rc;

	so.github_api_url = api_url;
	so.github_token = "ghbench-token";
	so.timeout_s = 10;
	so.clock.now = set_now;
	if (lease_store_open(&st, "github:octo/leases", &so, err, sizeof(err)) < 0) {
		fprintf(stderr, "ghbench: %s\n", err);
		return 1;
	}
	fakegh_reset_counts(fk);
	rc = fn(r, st, names, 3, o);
	lease_store_free(st);
	if (rc < 0 || strcmp(lease_status_name(r->status), want) != 0) {
		fprintf(stderr, "ghbench: %s: %s\n", what, r->message);
		return 1;
	}
	row(what, fakegh_count(fk, FAKEGH_ANY), budget);
	return 0;
}

static int set_rows(lease_op_options *o)
{
	lease_set_result *r = calloc(1, sizeof(*r));
	char token[LEASE_TOKEN_HEXSZ + 1];
	int rc = 1;

	if (!r)
		return 1;
	set_offset = 0;
	if (set_row("set acquire, 3 fresh leases (one invocation)", lease_acquire_set, o,
	            "acquired", r, 3 + 4))
		goto out;
	memcpy(token, r->members[0].payload.lease_token, sizeof(token));
	o->lease_token = token;
	set_offset = 200;
	if (set_row("set heartbeat, 3 leases (one invocation)", lease_heartbeat_set, o, "renewed",
	            r, 3 + 3))
		goto out;
	o->to = LEASE_PHASE_WORKING;
	if (set_row("set transition, 3 leases (one invocation)", lease_transition_set, o,
	            "transitioned", r, 3 + 3))
		goto out;
	if (set_row("set release, 3 leases (one invocation)", lease_release_set, o, "released", r,
	            3 + 3))
		goto out;
	o->lease_token = NULL;
	o->to = LEASE_PHASE_NONE;
	if (set_row("set acquire, 3 released leases (one invocation)", lease_acquire_set, o,
	            "acquired", r, 3 + 3))
		goto out;
	rc = 0;
out:
	o->lease_token = NULL;
	o->to = LEASE_PHASE_NONE;
	free(r);
	return rc;
}

static int count_visit(const lease_ref_state *s, const lease_invalid_ref *iv, size_t total,
                       void *payload)
{
	(void)s, (void)iv, (void)total;
	++*(size_t *)payload;
	return 0;
}

/* The sweep's namespace read as reconcile and list do it (lease_namespace_each,
 * issue 29) at the fake @p f: one row of requests, against one request per
 * page of matching-refs plus one GraphQL batch per 100 leases plus one. The
 * refs the transport held at once go to *@p held. */
static int sweep_row(fakegh *f, const char *what, size_t *held)
{
	lease_store *st;
	size_t seen = 0;
	unsigned pages;
	char line[96];

	api_url = fakegh_url(f);
	st = open_gh();
	fakegh_reset_counts(f);
	if (lease_namespace_each(st, count_visit, &seen) < 0)
		return -1;
	pages = fakegh_count(f, FAKEGH_MATCHING);
	snprintf(line, sizeof(line), "%s, N = %zu", what, seen);
	row(line, fakegh_count(f, FAKEGH_ANY), (unsigned)(pages + (seen + 99) / 100 + 1));
	*held = lease__github_listing_peak(st->t, 0);
	lease_store_free(st);
	return 0;
}

int main(int argc, char **argv)
{
	fakegh_options fo;
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_store *st, *admin;
	lease_namespace ns;
	lease_result r;
	char token[LEASE_TOKEN_HEXSZ + 1], name[32], what[80];
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 250, i;
	fakegh *paged = NULL;
	size_t held_whole, held_one = 0, held_paged = 0;

	memset(&fo, 0, sizeof(fo));
	if (fakegh_start(&fk, &fo) < 0)
		return 1;
	api_url = fakegh_url(fk);
	o.owner = "bench";
	o.host = "runner-1";
	o.ttl_seconds = 300;
	admin = open_gh();

	printf("GitHub backend request budget (requests counted at the fake server)\n");
	printf("%-52s %8s %8s\n", "operation", "requests", "budget");

	/* each row: a fresh store handle = one CLI invocation */
	st = open_gh();
	fakegh_reset_counts(fk);
	if (lease_acquire(&r, st, "bench", &o) < 0)
		return 4;
	row("acquire (the namespace's very first lease)", fakegh_count(fk, FAKEGH_ANY), 5);
	memcpy(token, r.payload.lease_token, sizeof(token));
	lease_store_free(st);

	st = open_gh();
	fakegh_reset_counts(fk);
	if (lease_acquire(&r, st, "bench2", &o) < 0)
		return 4;
	row("acquire (fresh name, one invocation)", fakegh_count(fk, FAKEGH_ANY), 5);
	lease_store_free(st);

	o.lease_token = token;
	tool_make_due(admin, "bench", "bench", token);
	st = open_gh();
	fakegh_reset_counts(fk);
	if (lease_heartbeat(&r, st, "bench", &o) < 0 || r.status != LEASE_STATUS_RENEWED)
		return 5;
	row("heartbeat (one invocation)", fakegh_count(fk, FAKEGH_ANY), 4);
	lease_store_free(st);
	if (keep_row(1) != 0 || keep_row(3) != 0)
		return 5;

	st = open_gh();
	fakegh_reset_counts(fk);
	o.to = LEASE_PHASE_WORKING;
	if (lease_transition(&r, st, "bench", &o) < 0)
		return 6;
	row("transition (one invocation)", fakegh_count(fk, FAKEGH_ANY), 4);
	lease_store_free(st);

	st = open_gh();
	fakegh_reset_counts(fk);
	if (lease_release(&r, st, "bench", &o) < 0 || r.status != LEASE_STATUS_RELEASED)
		return 7;
	row("release (one invocation)", fakegh_count(fk, FAKEGH_ANY), 4);
	lease_store_free(st);

	o.lease_token = NULL;
	if (set_rows(&o) != 0)
		return 10;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "sweep%05d", i);
		if (lease_acquire(&r, admin, name, &o) < 0)
			return 8;
	}
	st = open_gh();
	fakegh_reset_counts(fk);
	memset(&ns, 0, sizeof(ns));
	if (lease_fetch_namespace(&ns, st) < 0)
		return 9;
	snprintf(what, sizeof(what), "namespace read, whole (N = %zu)", ns.count);
	row(what, fakegh_count(fk, FAKEGH_ANY), (unsigned)((ns.count + 99) / 100 + 2));
	lease_namespace_clear(&ns);
	held_whole = lease__github_listing_peak(st->t, 0);
	lease_store_free(st);
	if (sweep_row(fk, "reconcile/list sweep", &held_one) < 0)
		return 9;
	/* the same repository behind a fake that pages matching-refs (GHES, a
	 * proxy; github.com answers in one page) */
	fo.repo_path = fakegh_repo_path(fk);
	fo.page_size = 30;
	if (fakegh_start(&paged, &fo) < 0 ||
	    sweep_row(paged, "sweep, pages of 30 refs", &held_paged) < 0)
		return 9;
	printf("refs the listing held at once: whole %zu, sweep %zu, sweep in pages of 30 %zu\n",
	       held_whole, held_one, held_paged);
	fakegh_stop(paged);

	lease_store_free(admin);
	fakegh_stop(fk);
	printf("%s\n", over ? "ghbench: some operations are over budget (see docs)"
	                    : "ghbench: every operation within budget");
	return 0;
}
