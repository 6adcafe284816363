/* bench_reconcile: build a local store with N leases, each a heartbeat commit
 * over its parent (built quickly with `git fast-import`), then time one
 * reconcile sweep (lease_reconcile_each: the namespace streamed, each lease
 * classified and handed over one at a time, issue 29) and report the peak RSS
 * of this process (getrusage). Not a test: `make bench-reconcile`.
 *
 * usage: bench_reconcile N [DIR [slots]]   (DIR: reuse or create the store there;
 *        slots: every lease a slot of 3, lease-<k>@<i>of3 — and in every 100th NAME
 *        the third slot lease-<k>@1of2, a slot-count-mismatch — issue 27)
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reflease.h"
#include "tool.h"

static int64_t bench_now;

static void payload(char *out, size_t cap, const char *name, const char *phase, int64_t acq,
                    int64_t exp, int64_t ttl, unsigned long nonce)
{
	char a[LEASE_TIME_STRSZ + 1], e[LEASE_TIME_STRSZ + 1];

	lease_time_format(a, acq);
	lease_time_format(e, exp);
	snprintf(out, cap,
	         "%s: %s %s by bench-owner/run/1/job on runner-%lu\n\n"
	         "{\"acquired_at\":\"%s\",\"expires_at\":\"%s\",\"host\":\"runner-%lu\","
	         "\"lease_token\":\"%032lx\",\"name\":\"%s\",\"nonce\":\"%016lx\","
	         "\"owner\":\"bench-owner/run/1/job\",\"phase\":\"%s\",\"sdlc_version\":\"1.1.0\","
	         "\"transitions\":3,\"ttl_seconds\":%lld}\n",
	         name, exp - ttl == acq ? "acquire" : "heartbeat", phase, nonce % 64, a, e,
	         nonce % 64, nonce / 2 + 1, name, nonce, phase, (long long)ttl);
}

static void commit(FILE *f, const char *ref, unsigned long mark, unsigned long from, int64_t when,
                   const char *msg)
{
	fprintf(f, "commit %s\nmark :%lu\ncommitter reflease <reflease@localhost> %lld +0000\n",
	        ref, mark, (long long)when);
	fprintf(f, "data %zu\n%s\n", strlen(msg), msg);
	if (from)
		fprintf(f, "from :%lu\n", from);
}

/* N leases: most heartbeating cleanly (100 s apart, TTL 300), every 50th
 * heartbeating every 2 s (floor anomaly), every 20th expired, every 10th released. */
static int build(const char *dir, unsigned long n, int64_t now, int slots)
{
	char cmd[4200], ref[64], name[40], msg[2048];
	unsigned long i;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "git init -q --bare '%s' && git -C '%s' fast-import --quiet",
	         dir, dir);
	if (!(f = popen(cmd, "w")))
		return -1;
	for (i = 0; i < n; i++) {
		int64_t acq = now - 1000, hb = now - 10, prev = hb - (i % 50 == 0 ? 2 : 100);
		const char *phase = "working";

		if (!slots)
			snprintf(name, sizeof(name), "lease-%07lu", i);
		else if (i % 300 == 2)
			snprintf(name, sizeof(name), "lease-%07lu@1of2", i / 3);
		else
			snprintf(name, sizeof(name), "lease-%07lu@%luof3", i / 3, i % 3 + 1);
		snprintf(ref, sizeof(ref), "refs/leases/%s", name);
		if (i % 20 == 5) {
			hb = now - 2000;
			prev = hb - 100;
		}
		payload(msg, sizeof(msg), name, phase, acq, prev + 300, 300, 2 * i);
		commit(f, ref, 2 * i + 1, 0, prev, msg);
		if (i % 10 == 3)
			payload(msg, sizeof(msg), name, "released", acq, hb, 0, 2 * i + 1);
		else
			payload(msg, sizeof(msg), name, phase, acq, hb + 300, 300, 2 * i + 1);
		commit(f, ref, 2 * i + 2, 2 * i + 1, hb, msg);
	}
	return pclose(f) == 0 ? 0 : -1;
}

/* The visit of the streaming sweep: the entry is borrowed; count it. */
static int count_entry(const lease_reconcile_entry *e, void *payload)
{
	(void)e;
	++*(size_t *)payload;
	return 0;
}

int main(int argc, char **argv)
{
	size_t visited = 0;
	lease_store_options so = LEASE_STORE_OPTIONS_INIT;
	lease_reconcile_report rep;
	lease_store *st = NULL;
	char stamp[600];
	FILE *f;
	struct rusage ru;
	struct stat sb;
	char dir[512], spec[600], err[256];
	unsigned long n;
	double t0, t1, t2;
	int64_t now = (int64_t)time(NULL);
	int rc, slots = argc > 3 && strcmp(argv[3], "slots") == 0;

	if (argc < 2 || (n = strtoul(argv[1], NULL, 10)) == 0 || (argc > 3 && !slots)) {
		fprintf(stderr, "usage: bench_reconcile N [DIR [slots]]\n");
		return 64;
	}
	if (argc > 2)
		snprintf(dir, sizeof(dir), "%s", argv[2]);
	else
		snprintf(dir, sizeof(dir), "%s/bench-reconcile-%lu",
		         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", n);
	t0 = tool_mono();
	if (stat(dir, &sb) != 0) {
		if (build(dir, n, now, slots) < 0) {
			fprintf(stderr, "bench_reconcile: building %s failed\n", dir);
			return 1;
		}
		printf("built %lu leases (each with a parent) in %s: %.2f s\n", n, dir,
		       tool_mono() - t0);
		snprintf(stamp, sizeof(stamp), "%s/bench-now", dir);
		if ((f = fopen(stamp, "w"))) {
			fprintf(f, "%lld\n", (long long)now);
			fclose(f);
		}
	} else {
		long long v = 0;

		snprintf(stamp, sizeof(stamp), "%s/bench-now", dir);
		if ((f = fopen(stamp, "r"))) {
			if (fscanf(f, "%lld", &v) == 1)
				now = (int64_t)v;
			fclose(f);
		}
		printf("reusing %s\n", dir);
	}
	bench_now = now;
	/* the store's clock pinned to the build time: the anomaly mix is the
	 * same on every run over a reused store */
	so.clock.now = tool_clock;
	so.clock.payload = &bench_now;
	snprintf(spec, sizeof(spec), "local:%s", dir);
	t1 = tool_mono();
	if ((rc = lease_store_open(&st, spec, &so, err, sizeof(err))) < 0) {
		fprintf(stderr, "bench_reconcile: %s\n", err);
		return 1;
	}
	/* the streaming sweep (issue 29): one entry at a time, counted */
	rc = lease_reconcile_each(&rep, st, NULL, count_entry, &visited);
	t2 = tool_mono();
	if (rc < 0) {
		fprintf(stderr, "bench_reconcile: %s\n", lease_store_last_error(st));
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	if (visited != rep.count) {
		fprintf(stderr, "bench_reconcile: %zu entries visited, %zu counted\n", visited,
		        rep.count);
		return 1;
	}
	printf("sweep: %zu leases in %.3f s wall (process CPU %.3f s user+sys since start); "
	       "peak RSS %.1f MiB; ok %zu, info %zu, warning %zu, error %zu\n",
	       rep.count, t2 - t1,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
	       (double)ru.ru_maxrss / 1024.0, rep.counts[LEASE_SEV_OK], rep.counts[LEASE_SEV_INFO],
	       rep.counts[LEASE_SEV_WARNING], rep.counts[LEASE_SEV_ERROR]);
	lease_reconcile_report_free(&rep);
	lease_store_free(st);
	return 0;
}
