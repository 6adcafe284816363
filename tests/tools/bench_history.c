/* bench_history: how a lease's reachable history grows (issue 29). LEASES
 * leases (TTL 30) heartbeat every ttl/3 = 10 s through SECONDS of store time
 * (an injected clock: no sleeping) on a fresh local store, then report the
 * reachable commits per lease, the heartbeats written, the store on disk, and
 * the store after maintenance (`git gc --prune=now`: what `reflease gc
 * --grace 0` runs; the bench has no concurrent writer). No fsync (the
 * figures are about size, not durability). Not a test: `make bench-history`.
 *
 *   bench_history DIR replace|append [LEASES [SECONDS]]
 *
 * replace: this build's heartbeats (lease_heartbeat: a heartbeat replaces the
 *          heartbeat before it, protocol.md §2).
 * append:  the old format: each heartbeat a 1.1.0 commit on top of the tip,
 *          by CAS from it (what a 1.1 writer did); then `migrate --apply`
 *          (1.1 → 1.2) and one more hour of this build's heartbeats, to show
 *          the chain stops growing after the migration.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <git2.h>

#include "reflease.h"

#define TTL   30
#define EVERY 10

static int64_t clk;

static int64_t bench_clock(void *payload)
{
	(void)payload;
	return clk;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(lease_store *st, const char *what)
{
	fprintf(stderr, "bench_history: %s: %s\n", what, st ? lease_store_last_error(st) : "");
	exit(1);
}

/* The old format's heartbeat: the tip's payload extended, as a 1.1.0 commit
 * appended on the tip, by CAS from it. */
static void append_heartbeat(lease_store *st, const char *name)
{
	lease_ref_state s;
	lease_payload p;
	lease_oid oid;
	char *msg = NULL, *v;

	memset(&s, 0, sizeof(s));
	if (lease_fetch_ref(&s, st, name) < 0 || !s.present || s.payload_rc != 0)
		die(st, "read");
	p = s.payload;
	p.expires_at = clk + TTL;
	p.ttl_seconds = TTL;
	p.has_heartbeats = p.has_previous_heartbeat = 0;
	if (lease_random_hex(p.nonce, LEASE_NONCE_HEXSZ / 2, NULL) < 0 ||
	    lease_message_build(&msg, &p, LEASE_OP_HEARTBEAT) < 0)
		die(st, "message");
	if ((v = strstr(msg, "\"sdlc_version\":\"" SDLC_VERSION "\"")))
		memcpy(v + strlen("\"sdlc_version\":\""), "1.1.0", 5);
	if (lease_write_commit(&oid, st, &s.oid, msg) < 0 ||
	    lease_cas_replace(st, name, &s.oid, &oid) < 0)
		die(st, "append");
	free(msg);
	lease_ref_state_clear(&s);
}

/* Heartbeat every lease every EVERY s from @p from to @p to (store time). */
static long run(lease_store *st, int n, char tokens[][LEASE_TOKEN_HEXSZ + 1], int64_t from,
                int64_t to, int append)
{
	long writes = 0;
	int i;

	for (clk = from; clk <= to; clk += EVERY)
		for (i = 0; i < n; i++) {
			char name[32];

			snprintf(name, sizeof(name), "l%02d", i);
			if (append) {
				append_heartbeat(st, name);
			} else {
				lease_op_options o = LEASE_OP_OPTIONS_INIT;
				lease_result r;

				o.owner = "bench";
				o.host = "h";
				o.lease_token = tokens[i];
				if (lease_heartbeat(&r, st, name, &o) < 0 ||
				    r.status != LEASE_STATUS_RENEWED)
					die(st, "heartbeat");
			}
			writes++;
		}
	return writes;
}

/* Reachable commits of each lease: min and max over the leases. */
static void chains(lease_store *st, int n, size_t *lo, size_t *hi)
{
	int i;

	*lo = (size_t)-1;
	*hi = 0;
	for (i = 0; i < n; i++) {
		lease_history h;
		char name[32];

		snprintf(name, sizeof(name), "l%02d", i);
		if (lease_history_read(&h, st, name, 0, 0) < 0)
			die(st, "history");
		if (h.count < *lo)
			*lo = h.count;
		if (h.count > *hi)
			*hi = h.count;
		lease_history_free(&h);
	}
}

/* The store on disk, KiB (du -sk), and its loose objects (count-objects). */
static void disk(const char *dir, long *kib, long *loose)
{
	char cmd[1200], line[256];
	FILE *f;

	*kib = *loose = -1;
	snprintf(cmd, sizeof(cmd), "du -sk '%s'", dir);
	if ((f = popen(cmd, "r"))) {
		if (fgets(line, sizeof(line), f))
			*kib = strtol(line, NULL, 10);
		pclose(f);
	}
	snprintf(cmd, sizeof(cmd), "git --git-dir='%s' count-objects -v", dir);
	if ((f = popen(cmd, "r"))) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "count: ", 7) == 0)
				*loose = strtol(line + 7, NULL, 10);
		pclose(f);
	}
}

int main(int argc, char **argv)
{
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char spec[600], err[256], cmd[1200];
	static char tokens[100][LEASE_TOKEN_HEXSZ + 1];
	int n = 50, append, i;
	int64_t secs = 86400, t0 = 1800000000;
	long writes, kib, loose, kib2, loose2;
	size_t lo, hi;
	double t;

	if (argc < 3 || (strcmp(argv[2], "replace") && strcmp(argv[2], "append"))) {
		fprintf(stderr, "usage: bench_history DIR replace|append [LEASES [SECONDS]]\n");
		return 64;
	}
	append = strcmp(argv[2], "append") == 0;
	if (argc > 3)
		n = (int)strtol(argv[3], NULL, 10);
	if (argc > 4)
		secs = strtoll(argv[4], NULL, 10);
	if (n < 1 || n > 100 || secs < EVERY) {
		fprintf(stderr, "bench_history: 1..100 leases, at least %d s\n", EVERY);
		return 64;
	}
	if (lease_store_init_local(argv[1], NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_history: %s\n", err);
		return 1;
	}
	so.clock.now = bench_clock;
	snprintf(spec, sizeof(spec), "local:%s", argv[1]);
	clk = t0;
	if (lease_store_open(&st, spec, &so, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_history: %s\n", err);
		return 1;
	}
	/* durability is not measured here: no fsync (this process only) */
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 0);
	for (i = 0; i < n; i++) {
		lease_op_options o = LEASE_OP_OPTIONS_INIT;
		lease_result r;
		char name[32];

		snprintf(name, sizeof(name), "l%02d", i);
		o.owner = "bench";
		o.host = "h";
		o.ttl_seconds = TTL;
		if (lease_acquire(&r, st, name, &o) < 0)
			die(st, "acquire");
		memcpy(tokens[i], r.payload.lease_token, sizeof(tokens[i]));
	}
	t = mono();
	writes = run(st, n, tokens, t0 + EVERY, t0 + secs, append);
	t = mono() - t;
	chains(st, n, &lo, &hi);
	disk(argv[1], &kib, &loose);
	printf("%s: %d leases, TTL %d, a heartbeat every %d s for %lld s of store time: %ld "
	       "heartbeats in %.1f s\n",
	       append ? "append (old format, 1.1)" : "replace (this build, 1.2)", n, TTL, EVERY,
	       (long long)secs, writes, t);
	printf("  reachable commits per lease: %zu..%zu (1 tenure, 0 transitions)\n", lo, hi);
	printf("  store before maintenance: %.1f MiB, %ld loose objects\n", kib / 1024.0, loose);
	snprintf(cmd, sizeof(cmd), "git --git-dir='%s' gc --quiet --prune=now", argv[1]);
	t = mono();
	if (system(cmd) != 0)
		die(NULL, "git gc");
	t = mono() - t;
	disk(argv[1], &kib2, &loose2);
	printf("  store after maintenance (git gc --prune=now, %.1f s): %.2f MiB, %ld loose "
	       "objects\n",
	       t, kib2 / 1024.0, loose2);
	if (append) {
		lease_migrate_options mo = LEASE_MIGRATE_OPTIONS_INIT;
		lease_migrate_report mr;
		size_t lo2, hi2;

		clk = t0 + secs + 1;
		mo.apply = 1;
		if (lease_migrate(&mr, st, &mo) < 0)
			die(st, "migrate");
		printf("  migrate --apply: %zu migrated\n", mr.counts[LEASE_MIGRATE_MIGRATED]);
		lease_migrate_report_clear(&mr);
		writes = run(st, n, tokens, t0 + secs + EVERY, t0 + secs + 3600, 0);
		chains(st, n, &lo2, &hi2);
		printf("  then 1 h of this build's heartbeats (%ld): reachable commits per lease "
		       "%zu..%zu (+%zu: the migration and one heartbeat)\n",
		       writes, lo2, hi2, hi2 - hi);
	}
	lease_store_free(st);
	return 0;
}
