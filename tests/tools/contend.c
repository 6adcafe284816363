/* contend: race for one lease of a local store (the concurrency test, issue 3).
 *
 *   contend PATH NAME OWNER ITERATIONS [TTL [CACHE_DIR]]
 *
 * PATH is a local repository, or a store spec (local:PATH, remote:URL);
 * CACHE_DIR a remote: store's object cache (lease_store_options.cache_dir).
 * ITERATIONS times: acquire NAME (polling with a short jittered sleep while
 * it is held, paced by the attempt's cost: nap()), heartbeat once, release. Each verified tenure is
 * printed as "OWNER TOKEN START END" on stdout: START is CLOCK_REALTIME read right after the
 * acquire succeeded, END right before the release is sent, both in seconds with nanoseconds. A
 * checker verifies no two tenures overlap. Exit 0 when every iteration held and released the lease,
 * 1 otherwise. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reflease.h"

static double realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* nap after a held answer: 2-20 ms, plus 2 to 4 times as long as the attempt
 * took (spent_s): a waiter attempts about a quarter of its time. On a local
 * store an attempt takes about a millisecond (the nap stays 2-20 ms); through
 * git daemon each attempt execs git and the daemon forks, and 15 waiters
 * polling every 11 ms kept both CPUs busy (58 CPU-s for the remote
 * contention test, 18 with this pace): the race at each release is still
 * between all of them (issue 26) */
static void nap(unsigned int *seed, double spent_s)
{
	long ms = 2 + rand_r(seed) % 18, spent_ms = (long)(spent_s * 1000.0);
	struct timespec ts;

	if (spent_ms > 0)
		ms += 2 * spent_ms + rand_r(seed) % (2 * spent_ms + 1);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char spec[4096], err[256], hostname[64];
	long iterations, ttl = 30, i;
	unsigned int seed;
	int rc = 0;

	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: contend PATH NAME OWNER ITERATIONS [TTL [CACHE_DIR]]\n");
		return 2;
	}
	iterations = strtol(argv[4], NULL, 10);
	if (argc >= 6)
		ttl = strtol(argv[5], NULL, 10);
	if (argc == 7)
		so.cache_dir = argv[6];
	/* PATH may also be a whole store spec (remote:URL for the remote backend's
	 * contention test, tests/test_remote.c). */
	if (strncmp(argv[1], "local:", 6) == 0 || strncmp(argv[1], "remote:", 7) == 0)
		snprintf(spec, sizeof(spec), "%s", argv[1]);
	else
		snprintf(spec, sizeof(spec), "local:%s", argv[1]);
	if (lease_store_open(&st, spec, &so, err, sizeof(err)) < 0) {
		fprintf(stderr, "contend: %s\n", err);
		return 1;
	}
	snprintf(hostname, sizeof(hostname), "pid-%ld", (long)getpid());
	seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < iterations && rc == 0; i++) {
		lease_op_options o = LEASE_OP_OPTIONS_INIT;
		char token[LEASE_TOKEN_HEXSZ + 1];
		lease_result r;
		double start, end, t0;

		o.owner = argv[3];
		o.host = hostname;
		o.ttl_seconds = ttl;
		t0 = monotonic();
		while ((rc = lease_acquire(&r, st, argv[2], &o)) == LEASE_EHELD) {
			nap(&seed, monotonic() - t0);
			t0 = monotonic();
		}
		start = realtime();
		if (rc < 0) {
			fprintf(stderr, "contend %s: acquire: %s (%s)\n", argv[3],
			        lease_status_name(r.status), r.message);
			break;
		}
		memcpy(token, r.payload.lease_token, sizeof(token));
		o.lease_token = token;
		if ((rc = lease_heartbeat(&r, st, argv[2], &o)) < 0) {
			fprintf(stderr, "contend %s: heartbeat: %s (%s)\n", argv[3],
			        lease_status_name(r.status), r.message);
			break;
		}
		end = realtime();
		rc = lease_release(&r, st, argv[2], &o);
		if (rc < 0 || r.status != LEASE_STATUS_RELEASED) {
			fprintf(stderr, "contend %s: release: %s (%s)\n", argv[3],
			        lease_status_name(r.status), r.message);
			rc = rc < 0 ? rc : 1;
			break;
		}
		printf("%s %s %.9f %.9f\n", argv[3], token, start, end);
	}
	lease_store_free(st);
	return rc == 0 ? 0 : 1;
}
