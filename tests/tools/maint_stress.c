/* maint_stress: lease writers of a local store next to git maintenance
 * (issue 14, protocol.md §9).
 *
 *   maint_stress run STORE_PATH WRITERS SECONDS OUTDIR [MIN_WRITES]
 *   maint_stress check STORE_PATH WRITERS OUTDIR
 *
 * run: forks WRITERS holders; holder i acquires h<i> (TTL 5 s) and
 * heartbeats it every 0.3 s until SECONDS have passed (the floor makes about
 * one a second "renewed") — and, on a loaded machine, on until MIN_WRITES
 * writes were acknowledged in all, for at most 2 x SECONDS — appending the oid of every
 * acknowledged write (the acquire and each renewed heartbeat) to OUTDIR/h<i>. One more process
 * churns deletes through the library: acquire p<k>, release it, prune it
 * (lease_reconcile with prune_days 0, which archives and cas_deletes). The
 * caller runs git pack-refs / gc / maintenance meanwhile (tests/shell/
 * t_local_maintenance.sh, scripts/stress-local.sh). Prints one line:
 * "writes N renewed N not_due N failed N prunes N".
 *
 * check: every oid in OUTDIR/h<i> must be the tip of refs/leases/h<i> or on
 * its first-parent chain (an acknowledged write is never undone), or be a
 * heartbeat that a later heartbeat of its tenure on the chain replaced
 * (protocol.md §2, issue 29). Prints "acknowledged N lost N (replaced ...)"
 * and exits 1 when anything was lost. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reflease.h"

#define CHAIN_MAX 200000

enum { C_WRITES, C_RENEWED, C_NOT_DUE, C_FAILED, C_PRUNES, C_N };

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static lease_store *open_store(const char *path)
{
	lease_store *st = NULL;
	char spec[4200], err[512];

	snprintf(spec, sizeof(spec), "local:%s", path);
	if (lease_store_open(&st, spec, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "maint_stress: %s\n", err);
		_exit(3);
	}
	return st;
}

/* One acknowledged write: its oid and, for a heartbeat, what identifies the
 * run it belongs to (heartbeats counted, parent, token): a later heartbeat
 * replaces it and gc may prune it (issue 29). */
static void record(FILE *f, const lease_result *r)
{
	char hex[LEASE_OID_HEXSZ + 1], par[LEASE_OID_HEXSZ + 1] = "-";

	lease_oid_tohex(hex, &r->oid);
	if (r->has_parent)
		lease_oid_tohex(par, &r->parent);
	fprintf(f, "%s %lld %s %s\n", hex,
	        (long long)(r->payload.has_heartbeats ? r->payload.heartbeats : 0), par,
	        r->payload.lease_token);
	fflush(f);
}

static double until, hard_until;
static long min_writes;

/* Keep going: before the deadline, or past it until min_writes (bounded). */
static int going(const long *counts)
{
	double now = mono();

	return now < until || (now < hard_until &&
	                       __atomic_load_n(&counts[C_WRITES], __ATOMIC_SEQ_CST) < min_writes);
}

static void holder(const char *path, int i, const char *outdir, long *counts)
{
	lease_store *st = open_store(path);
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	char name[16], owner[16], file[4200], token[LEASE_TOKEN_HEXSZ + 1];
	lease_result r;
	FILE *f;

	snprintf(name, sizeof(name), "h%d", i);
	snprintf(owner, sizeof(owner), "w%d", i);
	snprintf(file, sizeof(file), "%s/%s", outdir, name);
	if (!(f = fopen(file, "w")))
		_exit(3);
	o.owner = owner;
	o.host = "stress";
	o.ttl_seconds = 5;
	if (lease_acquire(&r, st, name, &o) != 0) {
		fprintf(stderr, "maint_stress: acquire %s: %s\n", name, r.message);
		_exit(3);
	}
	__atomic_add_fetch(&counts[C_WRITES], 1, __ATOMIC_SEQ_CST);
	record(f, &r);
	memcpy(token, r.payload.lease_token, sizeof(token));
	o.lease_token = token;
	while (going(counts)) {
		nap_ms(300);
		if (lease_heartbeat(&r, st, name, &o) == 0 && r.status == LEASE_STATUS_RENEWED) {
			__atomic_add_fetch(&counts[C_WRITES], 1, __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&counts[C_RENEWED], 1, __ATOMIC_SEQ_CST);
			record(f, &r);
		} else if (r.status == LEASE_STATUS_NOT_DUE) {
			__atomic_add_fetch(&counts[C_NOT_DUE], 1, __ATOMIC_SEQ_CST);
		} else {
			__atomic_add_fetch(&counts[C_FAILED], 1, __ATOMIC_SEQ_CST);
			fprintf(stderr, "maint_stress: heartbeat %s: %s: %s\n", name,
			        lease_status_name(r.status), r.message);
		}
	}
	fclose(f);
	lease_store_free(st);
	_exit(0);
}

/* acquire p<k>, release it, prune the namespace's released leases. */
static void churner(const char *path, long *counts)
{
	lease_store *st = open_store(path);
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	lease_reconcile_options ro = LEASE_RECONCILE_OPTIONS_INIT;
	char name[16], token[LEASE_TOKEN_HEXSZ + 1];
	lease_result r;
	int k = 0;

	o.owner = "churn";
	o.host = "stress";
	o.ttl_seconds = 5;
	ro.prune_days = 0;
	while (going(counts)) {
		lease_reconcile_report rep;

		snprintf(name, sizeof(name), "p%02d", k++ % 20);
		o.lease_token = NULL;
		if (lease_acquire(&r, st, name, &o) == 0) {
			memcpy(token, r.payload.lease_token, sizeof(token));
			o.lease_token = token;
			lease_release(&r, st, name, &o);
		}
		memset(&rep, 0, sizeof(rep));
		if (lease_reconcile(&rep, st, &ro) == 0)
			__atomic_add_fetch(&counts[C_PRUNES], (long)rep.pruned, __ATOMIC_SEQ_CST);
		lease_reconcile_report_free(&rep);
		nap_ms(50);
	}
	lease_store_free(st);
	_exit(0);
}

static int run(const char *path, int writers, int seconds, const char *outdir, long min)
{
	long *counts = mmap(NULL, sizeof(long) * C_N, PROT_READ | PROT_WRITE,
	                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int i, status, bad = 0;
	pid_t pid;

	if (counts == MAP_FAILED)
		return 3;
	memset(counts, 0, sizeof(long) * C_N);
	until = mono() + seconds;
	hard_until = until + seconds;
	min_writes = min;
	for (i = 0; i <= writers; i++) {
		if ((pid = fork()) < 0)
			return 3;
		if (pid == 0) {
			if (i == writers)
				churner(path, counts);
			holder(path, i, outdir, counts);
		}
	}
	while ((pid = wait(&status)) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad++;
	printf("writes %ld renewed %ld not_due %ld failed %ld prunes %ld\n", counts[C_WRITES],
	       counts[C_RENEWED], counts[C_NOT_DUE], counts[C_FAILED], counts[C_PRUNES]);
	return bad ? 1 : 0;
}

static int oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(a, b);
}

/* An acknowledged heartbeat off the chain is not lost when a later heartbeat
 * of its tenure replaced it (protocol.md §2, issue 29): a chain commit on the
 * parent it was written on, a heartbeat with the same token, counting more
 * heartbeats. (The replaced commit itself may be gone: gc prunes it.) */
static int superseded(git_repository *repo, long long hb, const git_oid *parent, const char *token,
                      const git_oid *order, size_t n)
{
	size_t k;

	for (k = 0; hb > 0 && k < n; k++) {
		git_commit *c = NULL;
		lease_payload y;
		lease_op op = LEASE_OP_UNKNOWN;
		const char *msg;
		int ok;

		if (git_commit_lookup(&c, repo, &order[k]) < 0)
			continue;
		msg = git_commit_message_raw(c);
		ok = git_commit_parentcount(c) == 1 &&
		     git_oid_equal(git_commit_parent_id(c, 0), parent) &&
		     lease_message_parse(&y, &op, msg, strlen(msg), NULL, NULL, 0) == 0 &&
		     op == LEASE_OP_HEARTBEAT && y.has_heartbeats && y.heartbeats > hb &&
		     strcmp(y.lease_token, token) == 0;
		git_commit_free(c);
		if (ok)
			return 1;
	}
	return 0;
}

static int check(const char *path, int writers, const char *outdir)
{
	git_repository *repo = NULL;
	git_oid *chain = malloc(sizeof(git_oid) * CHAIN_MAX);
	git_oid *order = malloc(sizeof(git_oid) * CHAIN_MAX);
	long acked = 0, lost = 0, replaced = 0;
	int i;

	git_libgit2_init();
	if (!chain || !order ||
	    git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		fprintf(stderr, "maint_stress: cannot open %s\n", path);
		return 3;
	}
	for (i = 0; i < writers; i++) {
		char ref[64], file[4200], line[256];
		size_t n = 0;
		git_oid cur;
		git_commit *c = NULL;
		FILE *f;

		snprintf(ref, sizeof(ref), "refs/leases/h%d", i);
		snprintf(file, sizeof(file), "%s/h%d", outdir, i);
		if (git_reference_name_to_id(&cur, repo, ref) < 0) {
			fprintf(stderr, "maint_stress: %s is gone\n", ref);
			lost++;
			continue;
		}
		/* the first-parent chain from the tip */
		while (n < CHAIN_MAX) {
			chain[n++] = cur;
			if (git_commit_lookup(&c, repo, &cur) < 0)
				break;
			if (git_commit_parentcount(c) == 0) {
				git_commit_free(c);
				break;
			}
			cur = *git_commit_parent_id(c, 0);
			git_commit_free(c);
		}
		memcpy(order, chain, n * sizeof(*chain));
		qsort(chain, n, sizeof(*chain), oid_cmp);
		if (!(f = fopen(file, "r"))) {
			fprintf(stderr, "maint_stress: no %s\n", file);
			lost++;
			continue;
		}
		while (fgets(line, sizeof(line), f)) {
			char hex[64] = "", par[64] = "", tok[64] = "";
			long long hb = 0;
			git_oid id, pid;

			line[strcspn(line, "\n")] = '\0';
			if (sscanf(line, "%63s %lld %63s %63s", hex, &hb, par, tok) < 1 ||
			    git_oid_fromstr(&id, hex) < 0)
				continue;
			acked++;
			if (bsearch(&id, chain, n, sizeof(*chain), oid_cmp))
				continue;
			if (git_oid_fromstr(&pid, par) == 0 &&
			    superseded(repo, hb, &pid, tok, order, n)) {
				replaced++;
				continue;
			}
			{
				lost++;
				fprintf(stderr,
				        "maint_stress: %s: acknowledged %s is not in the chain\n",
				        ref, line);
			}
		}
		fclose(f);
	}
	printf("acknowledged %ld lost %ld (replaced by a later heartbeat %ld)\n", acked, lost,
	       replaced);
	git_repository_free(repo);
	free(order);
	free(chain);
	return lost ? 1 : 0;
}

int main(int argc, char **argv)
{
	if ((argc == 6 || argc == 7) && strcmp(argv[1], "run") == 0)
		return run(argv[2], (int)strtol(argv[3], NULL, 10), (int)strtol(argv[4], NULL, 10),
		           argv[5], argc == 7 ? strtol(argv[6], NULL, 10) : 0);
	if (argc == 5 && strcmp(argv[1], "check") == 0)
		return check(argv[2], (int)strtol(argv[3], NULL, 10), argv[4]);
	fprintf(stderr, "usage: maint_stress run STORE WRITERS SECONDS OUTDIR [MIN_WRITES]\n"
	                "       maint_stress check STORE WRITERS OUTDIR\n");
	return 64;
}
