/* bench_cas: in-process throughput of the local store (issue 8, make bench).
 *
 *   bench_cas STORE_PATH [RUNS [SECONDS]]
 *
 * For RUNS runs (default 5) of SECONDS each (default 1.0), counts completed
 * operations per second of:
 *   cas_replace      write a payload commit + lease_cas_replace (verified:
 *                    the primitive re-reads the ref), one lease
 *   heartbeat        lease_heartbeat through the runtime (read, decide,
 *                    build, validate, write, CAS, verify); the store clock is
 *                    injected and moves 1 s per heartbeat so each one is due
 *                    (TTL 5 s: floor 1 s, protocol.md §6)
 *   acquire_release  lease_acquire + lease_release of a fresh name (two
 *                    verified writes; counted as two operations)
 * and prints one line per figure: "<figure> median <ops/s> min <ops/s> max
 * <ops/s> runs <n>", then "store_open_ms <ms>": the time of the process's
 * first lease_store_open (libgit2's global init, which on Debian's libgit2
 * loads the system CA bundle for mbedTLS, plus opening the repository) — a
 * cost each `reflease` invocation pays once. Exit 0, or 1 on any failed
 * operation. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reflease.h"

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t fake_now;

static int64_t fake_clock(void *payload)
{
	(void)payload;
	return fake_now;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	printf("%s median %.0f min %.0f max %.0f runs %d\n", what,
	       n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0, v[0], v[n - 1], n);
	fflush(stdout);
}

/* A valid claimed payload for @p name; @p seq makes every message unique. */
static char *message_for(const char *name, long seq, const lease_oid *parent)
{
	lease_payload p;
	char *msg = NULL;

	(void)parent;
	memset(&p, 0, sizeof(p));
	snprintf(p.sdlc_version, sizeof(p.sdlc_version), "1.1.0");
	p.version_major = 1;
	p.version_minor = 1;
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.owner, sizeof(p.owner), "bench");
	snprintf(p.host, sizeof(p.host), "bench");
	p.phase = LEASE_PHASE_CLAIMED;
	snprintf(p.lease_token, sizeof(p.lease_token), "0123456789abcdef0123456789abcdef");
	p.acquired_at = 1700000000;
	p.expires_at = 1700000000 + 300 + seq;
	snprintf(p.nonce, sizeof(p.nonce), "%016lx", (unsigned long)seq);
	p.has_ttl = 1;
	p.ttl_seconds = 300;
	if (lease_message_build(&msg, &p, LEASE_OP_HEARTBEAT) < 0)
		return NULL;
	return msg;
}

static double run_cas(lease_store *st, double seconds, long *seq)
{
	lease_oid cur, next;
	lease_ref_state s;
	double t0 = mono(), t;
	long n = 0;
	char *msg;

	memset(&s, 0, sizeof(s));
	if (lease_fetch_ref(&s, st, "cas") < 0 || !s.present)
		return -1;
	cur = s.oid;
	lease_ref_state_clear(&s);
	do {
		if (!(msg = message_for("cas", ++*seq, &cur)))
			return -1;
		if (lease_write_commit(&next, st, &cur, msg) < 0 ||
		    lease_cas_replace(st, "cas", &cur, &next) < 0) {
			fprintf(stderr, "bench_cas: cas_replace: %s\n", lease_store_last_error(st));
			free(msg);
			return -1;
		}
		free(msg);
		cur = next;
		n++;
	} while ((t = mono() - t0) < seconds);
	return (double)n / t;
}

static double run_heartbeat(lease_store *st, double seconds, const char *token)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_result r;
	double t0 = mono(), t;
	long n = 0;

	o.owner = "bench";
	o.host = "bench";
	o.ttl_seconds = 5;
	o.lease_token = token;
	do {
		fake_now += 1;
		if (lease_heartbeat(&r, st, "hb", &o) < 0 || r.status != LEASE_STATUS_RENEWED) {
			fprintf(stderr, "bench_cas: heartbeat: %s (%s)\n",
			        lease_status_name(r.status), r.message);
			return -1;
		}
		n++;
	} while ((t = mono() - t0) < seconds);
	return (double)n / t;
}

static double run_acquire_release(lease_store *st, double seconds, long *seq)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_result r;
	double t0 = mono(), t;
	long n = 0;
	char name[32], token[LEASE_TOKEN_HEXSZ + 1];

	o.owner = "bench";
	o.host = "bench";
	o.ttl_seconds = 60;
	do {
		snprintf(name, sizeof(name), "ar%ld", ++*seq % 64);
		o.lease_token = NULL;
		if (lease_acquire(&r, st, name, &o) < 0) {
			fprintf(stderr, "bench_cas: acquire: %s (%s)\n",
			        lease_status_name(r.status), r.message);
			return -1;
		}
		memcpy(token, r.payload.lease_token, sizeof(token));
		o.lease_token = token;
		if (lease_release(&r, st, name, &o) < 0 || r.status != LEASE_STATUS_RELEASED) {
			fprintf(stderr, "bench_cas: release: %s (%s)\n",
			        lease_status_name(r.status), r.message);
			return -1;
		}
		n += 2;
	} while ((t = mono() - t0) < seconds);
	return (double)n / t;
}

int main(int argc, char **argv)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_store *st = NULL;
	lease_result r;
	lease_oid first;
	char spec[4200], err[256], token[LEASE_TOKEN_HEXSZ + 1], *msg;
	double cas[64], hb[64], ar[64], secs = 1.0, open_ms;
	int runs = 5, i;
	long seq = 0;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: bench_cas STORE_PATH [RUNS [SECONDS]]\n");
		return 2;
	}
	if (argc > 2)
		runs = (int)strtol(argv[2], NULL, 10);
	if (argc > 3)
		secs = strtod(argv[3], NULL);
	if (runs < 1 || runs > 64 || secs <= 0) {
		fprintf(stderr, "bench_cas: RUNS 1..64, SECONDS > 0\n");
		return 2;
	}
	fake_now = (int64_t)time(NULL);
	so.clock.now = fake_clock;
	snprintf(spec, sizeof(spec), "local:%s", argv[1]);
	open_ms = mono();
	if (lease_store_open(&st, spec, &so, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_cas: %s\n", err);
		return 1;
	}
	open_ms = (mono() - open_ms) * 1e3;
	/* setup: a lease for the raw CAS, one for heartbeats */
	if (!(msg = message_for("cas", 0, NULL)) || lease_write_commit(&first, st, NULL, msg) < 0 ||
	    lease_cas_create(st, "cas", &first) < 0) {
		fprintf(stderr, "bench_cas: setup: %s\n", lease_store_last_error(st));
		return 1;
	}
	free(msg);
	o.owner = "bench";
	o.host = "bench";
	o.ttl_seconds = 5;
	if (lease_acquire(&r, st, "hb", &o) < 0) {
		fprintf(stderr, "bench_cas: setup acquire: %s\n", r.message);
		return 1;
	}
	memcpy(token, r.payload.lease_token, sizeof(token));
	for (i = 0; i < runs; i++) {
		if ((cas[i] = run_cas(st, secs, &seq)) < 0 ||
		    (hb[i] = run_heartbeat(st, secs, token)) < 0 ||
		    (ar[i] = run_acquire_release(st, secs, &seq)) < 0)
			return 1;
	}
	report("cas_replace", cas, runs);
	report("heartbeat", hb, runs);
	report("acquire_release", ar, runs);
	printf("store_open_ms %.1f\n", open_ms);
	lease_store_free(st);
	return 0;
}
