/* Latency of the remote backend (issue 9 acceptance), printed as a table by
 * `make bench-remote` (part of `make bench`): acquire and heartbeat through
 * reflease against git daemon (git://) and git http-backend behind lighttpd
 * (http://) on 127.0.0.1, next to the git CLI doing the same verified write
 * (`git push --force-with-lease=<ref>:<old>` + `git ls-remote`).
 *
 *   remotebench [N]    N = samples per row (default 20)
 *
 * reflease's acquire is read + commit + push + verifying ls-remote; its
 * heartbeat the same on an existing lease (an injected clock 10 s further on
 * each time makes every heartbeat due). The git CLI row is only the write and
 * its ls-remote, from a repository that already holds the commit. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reflease.h"
#include "support/gitserver.h"
#include "support/testrepo.h"

static int64_t clock_offset;
static gitserver gs;
static char work[512]; /* the git CLI's scratch repository */

/* Every exit path (also exit(1) on a failed sample) stops the servers. */
static void cleanup(void)
{
	if (work[0])
		testrepo_remove(work);
	work[0] = '\0';
	gitserver_stop(&gs);
}

static int64_t bench_now(void *payload)
{
	(void)payload;
	return (int64_t)time(NULL) + clock_offset;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void row(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	printf("%-48s %8.1f %8.1f %8.1f\n", what, v[n / 2],
	       v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1], v[n - 1]);
}

static char cache[700]; /* the stores' object cache */

static lease_store *open_store(const char *url)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	char spec[900], err[512];

	o.clock.now = bench_now;
	o.cache_dir = cache;
	snprintf(spec, sizeof(spec), "remote:%s", url);
	if (lease_store_open(&st, spec, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "remotebench: %s\n", err);
		exit(1);
	}
	return st;
}

static void bench_reflease(const char *label, const char *url, int n)
{
	lease_op_options op = LEASE_OP_OPTIONS_INIT;
	lease_store *st = open_store(url);
	double *acq = calloc((size_t)n, sizeof(double)), *hb = calloc((size_t)n, sizeof(double));
	char name[64], token[LEASE_TOKEN_HEXSZ + 1], what[128];
	lease_result r;
	int i;

	if (!acq || !hb)
		exit(1);
	op.owner = "bench";
	op.host = "bench-host";
	op.ttl_seconds = 60;
	for (i = 0; i < n; i++) {
		double t0;

		snprintf(name, sizeof(name), "bench-%d", i);
		t0 = mono_ms();
		if (lease_acquire(&r, st, name, &op) != 0) {
			fprintf(stderr, "remotebench: acquire: %s\n", r.message);
			exit(1);
		}
		acq[i] = mono_ms() - t0;
	}
	memcpy(token, r.payload.lease_token, sizeof(token));
	op.lease_token = token;
	for (i = 0; i < n; i++) {
		double t0;

		clock_offset += 10;
		t0 = mono_ms();
		if (lease_heartbeat(&r, st, name, &op) != 0 || r.status != LEASE_STATUS_RENEWED) {
			fprintf(stderr, "remotebench: heartbeat: %s %s\n",
			        lease_status_name(r.status), r.message);
			exit(1);
		}
		hb[i] = mono_ms() - t0;
	}
	snprintf(what, sizeof(what), "%s reflease acquire", label);
	row(what, acq, n);
	snprintf(what, sizeof(what), "%s reflease heartbeat", label);
	row(what, hb, n);
	lease_store_free(st);
	free(acq);
	free(hb);
}

/* The git CLI's verified write: force-with-lease push of a prepared commit,
 * then ls-remote. */
static void bench_git(const char *label, const char *url, const char *repo, int n)
{
	double *v = calloc((size_t)n, sizeof(double));
	char old[64] = "", cur[64], cmd[2048], what[128];
	int i;

	if (!v)
		exit(1);
	for (i = 0; i < n; i++) {
		double t0;
		char args[256];

		snprintf(args, sizeof(args),
		         "-c user.name=b -c user.email=b@b commit-tree "
		         "4b825dc642cb6eb9a060e54bf8d69288fbee4904 %s%s -m 'bench %d'",
		         old[0] ? "-p " : "", old, i);
		if (testrepo_git(cur, sizeof(cur), repo, args) != 0)
			exit(1);
		cur[strcspn(cur, "\n")] = '\0';
		snprintf(cmd, sizeof(cmd),
		         "git -C '%s' push -q --force-with-lease=refs/leases/cli:%s '%s' "
		         "%s:refs/leases/cli && git ls-remote '%s' refs/leases/cli | grep -q %s",
		         repo, old, url, cur, url, cur);
		t0 = mono_ms();
		if (system(cmd) != 0) {
			fprintf(stderr, "remotebench: %s failed\n", cmd);
			exit(1);
		}
		v[i] = mono_ms() - t0;
		snprintf(old, sizeof(old), "%s", cur);
	}
	snprintf(what, sizeof(what), "%s git push --force-with-lease + ls-remote", label);
	row(what, v, n);
	free(v);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 20;
	char url[800];

	if (n < 1)
		n = 20;
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	if (gitserver_start(&gs) < 0) {
		fprintf(stderr, "remotebench: cannot start git daemon and lighttpd\n");
		return 1;
	}
	atexit(cleanup);
	snprintf(cache, sizeof(cache), "%s/cache/reflease", gs.root);
	if (gitserver_repo(&gs, "bench-git", NULL, 0) < 0 ||
	    gitserver_repo(&gs, "bench-http", NULL, 0) < 0 ||
	    testrepo_make(work, sizeof(work), TESTREPO_BARE) < 0 ||
	    testrepo_git(NULL, 0, work, "mktree </dev/null >/dev/null") != 0)
		return 1;
	printf("remote backend latency, ms over %d samples (127.0.0.1, libgit2 %s)\n", n, "1.5.1");
	printf("%-48s %8s %8s %8s\n", "", "median", "p90", "max");
	gitserver_url(&gs, GITSERVER_GIT, "bench-git", url, sizeof(url));
	bench_reflease("git://", url, n);
	bench_git("git://", url, work, n);
	gitserver_url(&gs, GITSERVER_HTTP, "bench-http", url, sizeof(url));
	clock_offset = 0;
	bench_reflease("http://", url, n);
	testrepo_remove(work);
	if (testrepo_make(work, sizeof(work), TESTREPO_BARE) < 0 ||
	    testrepo_git(NULL, 0, work, "mktree </dev/null >/dev/null") != 0)
		return 1;
	bench_git("http://", url, work, n);
	return 0;
}
