/* bench_ghlatency: acquire and heartbeat latency of the GitHub backend at the
 * fake GitHub server (tests/support/fakegh.c) with an injected round-trip
 * delay per request (issue 8, make bench).
 *
 *   bench_ghlatency [RUNS [DELAY_MS...]]     default: 7 runs, delays 0 50 100
 *
 * For each delay, RUNS acquires of fresh names (each a new process-level
 * store handle, as one `reflease acquire` invocation) and RUNS heartbeats
 * (each due: the payload's heartbeat time is planted in the past) are timed;
 * prints one line per (operation, delay): "<op> delay <ms> median <ms> min
 * <ms> max <ms> requests <n>" where requests is the median request count. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reflease.h"
#include "support/fakegh.h"

static fakegh *fk;

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static lease_store *open_gh(void)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char err[512];

	o.github_api_url = fakegh_url(fk);
	o.github_token = "bench-token";
	o.timeout_s = 30;
	if (lease_store_open(&st, "github:octo/leases", &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_ghlatency: %s\n", err);
		exit(1);
	}
	return st;
}

/* Make the next heartbeat of @p name due: plant a payload (same owner,
 * host and token) whose heartbeat time lies 200 s back (TTL 300). */
static void make_due(const char *name)
{
	lease_store *st = open_gh();
	lease_ref_state s;
	lease_payload p;
	lease_oid oid;
	char *m = NULL;
	int64_t now;

	memset(&s, 0, sizeof(s));
	if (lease_fetch_ref(&s, st, name) < 0 || !s.present || s.payload_rc != 0)
		exit(2);
	p = s.payload;
	now = lease_store_now(st);
	p.expires_at = now + 100;
	p.acquired_at = now - 200;
	p.ttl_seconds = 300;
	if (lease_message_build(&m, &p, LEASE_OP_HEARTBEAT) < 0 ||
	    lease_write_commit(&oid, st, &s.oid, m) < 0 ||
	    lease_cas_replace(st, name, &s.oid, &oid) < 0)
		exit(3);
	free(m);
	lease_ref_state_clear(&s);
	lease_store_free(st);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *op, int delay, double *ms, double *req, int n)
{
	qsort(ms, (size_t)n, sizeof(double), cmp_double);
	qsort(req, (size_t)n, sizeof(double), cmp_double);
	printf("%s delay %d median %.1f min %.1f max %.1f requests %.0f\n", op, delay,
	       n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2.0, ms[0], ms[n - 1], req[n / 2]);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	fakegh_options fo;
	int runs = 7, d, i, ndelays = 0, delays[16];
	static int seq;

	if (argc > 1)
		runs = (int)strtol(argv[1], NULL, 10);
	for (i = 2; i < argc && ndelays < 16; i++)
		delays[ndelays++] = (int)strtol(argv[i], NULL, 10);
	if (!ndelays) {
		delays[ndelays++] = 0;
		delays[ndelays++] = 50;
		delays[ndelays++] = 100;
	}
	if (runs < 1 || runs > 64) {
		fprintf(stderr, "usage: bench_ghlatency [RUNS (1..64) [DELAY_MS...]]\n");
		return 2;
	}
	memset(&fo, 0, sizeof(fo));
	if (fakegh_start(&fk, &fo) < 0)
		return 1;
	{ /* the namespace's first lease, so later acquires are the steady case */
		lease_store *st = open_gh();
		lease_op_options o = LEASE_OP_OPTIONS_INIT;
		lease_result r;

		o.owner = "bench";
		o.host = "h";
		if (lease_acquire(&r, st, "first", &o) < 0) {
			fprintf(stderr, "bench_ghlatency: setup: %s\n", r.message);
			return 1;
		}
		lease_store_free(st);
	}
	for (d = 0; d < ndelays; d++) {
		double acq[64], acq_req[64], hb[64], hb_req[64];

		for (i = 0; i < runs; i++) {
			lease_op_options o = LEASE_OP_OPTIONS_INIT;
			lease_result r;
			lease_store *st;
			char name[32], token[LEASE_TOKEN_HEXSZ + 1];
			double t0;

			snprintf(name, sizeof(name), "lat%d", ++seq);
			o.owner = "bench";
			o.host = "h";
			o.ttl_seconds = 60;
			fakegh_clear_faults(fk);
			if (delays[d] > 0)
				fakegh_fault(fk, FAKEGH_ANY, FAKEGH_FAULT_STALL, 1000, delays[d]);
			fakegh_reset_counts(fk);
			t0 = mono_ms();
			st = open_gh();
			if (lease_acquire(&r, st, name, &o) < 0) {
				fprintf(stderr, "bench_ghlatency: acquire: %s\n", r.message);
				return 1;
			}
			acq[i] = mono_ms() - t0;
			acq_req[i] = fakegh_count(fk, FAKEGH_ANY);
			lease_store_free(st);
			memcpy(token, r.payload.lease_token, sizeof(token));
			/* a due heartbeat of that lease, by a new invocation */
			fakegh_clear_faults(fk);
			make_due(name);
			if (delays[d] > 0)
				fakegh_fault(fk, FAKEGH_ANY, FAKEGH_FAULT_STALL, 1000, delays[d]);
			o.lease_token = token;
			o.ttl_seconds = 0;
			fakegh_reset_counts(fk);
			t0 = mono_ms();
			st = open_gh();
			if (lease_heartbeat(&r, st, name, &o) < 0 ||
			    r.status != LEASE_STATUS_RENEWED) {
				fprintf(stderr, "bench_ghlatency: heartbeat: %s (%s)\n",
				        lease_status_name(r.status), r.message);
				return 1;
			}
			hb[i] = mono_ms() - t0;
			hb_req[i] = fakegh_count(fk, FAKEGH_ANY);
			lease_store_free(st);
		}
		report("acquire", delays[d], acq, acq_req, runs);
		report("heartbeat", delays[d], hb, hb_req, runs);
	}
	fakegh_stop(fk);
	return 0;
}
