/* The local libgit2 backend (protocol.md §9): repository kinds, packed refs,
 * git gc, racing forked writers, lock contention, and a cross-check of what
 * it writes with the git CLI. */
#define _DEFAULT_SOURCE
#define _GNU_SOURCE /* RTLD_NOLOAD (issue 43) */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "reflease/primitives.h"
#include "store/backend.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/testrepo.h"

#define EMPTY_TREE "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

static unsigned int counter;

static lease_store *open_store(const char *path)
{
	lease_store *st = storefix_local(path, NULL);

	ck_assert_str_eq(lease_store_kind(st), "local");
	return st;
}

/* The refs under refs/leases of the repository @p dir, as git lists them
 * ("oid refname" lines), are exactly @p want. */
static void assert_lease_refs(const char *dir, const char *want)
{
	char out[4096];

	ck_assert_int_eq(
	        testrepo_git(out, sizeof(out), dir,
	                     "for-each-ref --format='%(objectname) %(refname)' refs/leases"),
	        0);
	ck_assert_str_eq(out, want);
}

static lease_oid write_msg(lease_store *st, const char *name, const char *op,
                           const lease_oid *parent)
{
	char msg[1024];
	lease_oid oid;
	int rc;

	snprintf(
	        msg, sizeof(msg),
	        "%s: %s claimed by o on h\n\n"
	        "{\"acquired_at\":\"2026-11-30T07:00:00Z\",\"expires_at\":\"2026-11-30T07:05:00Z\","
	        "\"host\":\"h\",\"lease_token\":\"0123456789abcdef0123456789abcdef\",\"name\":\"%"
	        "s\","
	        "\"nonce\":\"%08x%08x\",\"owner\":\"o\",\"phase\":\"claimed\","
	        "\"sdlc_version\":\"1.1.0\",\"transitions\":0,\"ttl_seconds\":300}\n",
	        name, op, name, (unsigned)getpid(), ++counter);
	rc = lease_write_commit(&oid, st, parent, msg);
	ck_assert_msg(rc == 0, "write_commit: %s", lease_store_last_error(st));
	return oid;
}

static void hex(char out[LEASE_OID_HEXSZ + 1], const lease_oid *oid)
{
	lease_oid_tohex(out, oid);
}

/* Create, replace, fetch, list and delete on one store. */
static void cycle(const char *path)
{
	lease_store *st = open_store(path);
	lease_ref_state s;
	lease_oid a, b;

	a = write_msg(st, "job", "acquire", NULL);
	ck_assert_int_eq(lease_cas_create(st, "job", &a), 0);
	b = write_msg(st, "job", "heartbeat", &a);
	ck_assert_int_eq(lease_cas_replace(st, "job", &a, &b), 0);
	ck_assert_int_eq(lease_fetch_ref(&s, st, "job"), 0);
	ck_assert(lease_oid_equal(&s.oid, &b));
	ck_assert(lease_oid_equal(&s.commit.parent, &a));
	lease_ref_state_clear(&s);
	storefix_expect_count(st, 1);
	ck_assert_int_eq(lease_cas_delete(st, "job", &b), 0);
	storefix_expect_absent(st, "job");
	lease_store_free(st);
}

START_TEST(repo_kinds)
{
	char dir[512], sub[600];

	/* Bare, no commits. */
	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	cycle(dir);
	testrepo_remove(dir);
	/* Non-bare with a commit, opened from the work tree and a subdirectory. */
	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_NONBARE), 0);
	cycle(dir);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	{
		/* Issue 14: local:PATH is PATH itself, never a search upward (78
		 * naming PATH); only "local:" alone (the CLI's default) searches
		 * from the current directory, as git does. */
		lease_store *st = NULL;
		char spec[700], err[1024] = "", cwd[512];

		snprintf(spec, sizeof(spec), "local:%s", sub);
		ck_assert_int_eq(lease_store_open(&st, spec, NULL, err, sizeof(err)),
		                 LEASE_ECONFIG);
		ck_assert_msg(strstr(err, sub) != NULL, "%s", err);
		snprintf(spec, sizeof(spec), "local:%s/.git/refs", dir);
		ck_assert_int_eq(lease_store_open(&st, spec, NULL, err, sizeof(err)),
		                 LEASE_ECONFIG);
		ck_assert(getcwd(cwd, sizeof(cwd)) != NULL);
		ck_assert_int_eq(chdir(sub), 0);
		ck_assert_int_eq(lease_store_open(&st, "local:", NULL, err, sizeof(err)), 0);
		lease_store_free(st);
		ck_assert_int_eq(chdir(cwd), 0);
		snprintf(sub, sizeof(sub), "%s/.git", dir);
		cycle(sub);
	}
	{
		/* The work tree's branch is untouched. */
		char out[256];
		ck_assert_int_eq(testrepo_git(out, sizeof(out), dir, "log --format=%s HEAD"), 0);
		ck_assert_str_eq(out, "init\n");
	}
	testrepo_remove(dir);
	/* Non-bare without any commit. */
	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_EMPTY_NONBARE), 0);
	cycle(dir);
	testrepo_remove(dir);
}
END_TEST

START_TEST(open_errors)
{
	lease_store *st = NULL;
	lease_transport *t = NULL;
	char err[512] = "";

	ck_assert_int_eq(
	        lease_store_open(&st, "local:/nonexistent/reflease/x", NULL, err, sizeof(err)),
	        LEASE_ECONFIG);
	ck_assert(st == NULL);
	ck_assert(strstr(err, "/nonexistent/reflease/x") != NULL);
	ck_assert_int_eq(lease__local_transport_new(&t, "/nonexistent/y", NULL, err, sizeof(err)),
	                 LEASE_ECONFIG);
	ck_assert(t == NULL);
}
END_TEST

/* `reflease init` makes a bare store; git for-each-ref and git log show what
 * the primitives wrote (issue 2 acceptance). */
START_TEST(init_and_git_cli_crosscheck)
{
	char dir[512], path[600], out[4096], args[1024], ha[41], hb[41];
	lease_store *st;
	lease_oid a, b;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	/* inside a repository: refused (issue 14), nothing created */
	snprintf(path, sizeof(path), "%s/store.git", dir);
	ck_assert_int_eq(lease_store_init_local(path, NULL, out, sizeof(out)), LEASE_ECONFIG);
	ck_assert_int_eq(access(path, F_OK), -1);
	testrepo_remove(dir);
	snprintf(dir, sizeof(dir), "/tmp/reflease-test-init-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store.git", dir);
	ck_assert_int_eq(lease_store_init_local(path, NULL, out, sizeof(out)), 0);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), path, "rev-parse --is-bare-repository"), 0);
	ck_assert_str_eq(out, "true\n");
	ck_assert_int_eq(testrepo_git(out, sizeof(out), path, "config core.logAllRefUpdates"), 0);
	ck_assert_str_eq(out, "true\n");

	st = open_store(path);
	a = write_msg(st, "deploy-1", "acquire", NULL);
	ck_assert_int_eq(lease_cas_create(st, "deploy-1", &a), 0);
	b = write_msg(st, "deploy-1", "heartbeat", &a);
	ck_assert_int_eq(lease_cas_replace(st, "deploy-1", &a, &b), 0);
	hex(ha, &a);
	hex(hb, &b);

	snprintf(args, sizeof(args), "%s refs/leases/deploy-1\n", hb);
	assert_lease_refs(path, args);

	ck_assert_int_eq(testrepo_git(out, sizeof(out), path,
	                              "log --format='%H|%P|%T|%an <%ae>|%cn <%ce>|%s' "
	                              "refs/leases/deploy-1"),
	                 0);
	snprintf(args, sizeof(args),
	         "%s|%s|" EMPTY_TREE "|reflease <reflease@localhost>|reflease <reflease@localhost>"
	         "|deploy-1: heartbeat claimed by o on h\n"
	         "%s||" EMPTY_TREE "|reflease <reflease@localhost>|reflease <reflease@localhost>"
	         "|deploy-1: acquire claimed by o on h\n",
	         hb, ha, ha);
	ck_assert_str_eq(out, args);

	/* The payload is the body, one line of JSON. */
	ck_assert_int_eq(
	        testrepo_git(out, sizeof(out), path, "log -1 --format=%b refs/leases/deploy-1"), 0);
	ck_assert(strncmp(out, "{\"acquired_at\":", 15) == 0);
	ck_assert(strstr(out, "\"name\":\"deploy-1\"") != NULL);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), path, "fsck --no-dangling 2>&1"), 0);
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

/* The commit is dated by the store clock (injected here). */
static int64_t fixed_clock(void *payload)
{
	(void)payload;
	return 1800000000;
}

START_TEST(commit_time_from_store_clock)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	char dir[512], spec[600], out[256];
	lease_store *st;
	lease_ref_state s;
	lease_oid a, ghost;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	o.clock.now = fixed_clock;
	snprintf(spec, sizeof(spec), "local:%s", dir);
	ck_assert_int_eq(lease_store_open(&st, spec, &o, NULL, 0), 0);
	a = write_msg(st, "t", "acquire", NULL);
	ck_assert_int_eq(lease_cas_create(st, "t", &a), 0);
	ck_assert_int_eq(lease_fetch_ref(&s, st, "t"), 0);
	ck_assert_int_eq(s.commit.time, 1800000000);
	lease_ref_state_clear(&s);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), dir, "log -1 --format=%ct refs/leases/t"),
	                 0);
	ck_assert_str_eq(out, "1800000000\n");
	/* A missing parent is an error, not a crash. */
	ck_assert_int_eq(lease_oid_fromhex(&ghost, "1111111111111111111111111111111111111111"), 0);
	ck_assert_int_lt(lease_write_commit(&a, st, &ghost, "x\n"), 0);
	ck_assert(lease_store_last_error(st)[0] != '\0');
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

/* Packed refs and git gc: replace and delete of packed refs, no resurrection. */
START_TEST(packed_refs_and_gc)
{
	char dir[512], out[4096], hb[41];
	lease_store *st;
	lease_namespace ns;
	lease_oid a[4], b;
	struct stat sb;
	char loose[700];
	int i;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	st = open_store(dir);
	for (i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", i);
		a[i] = write_msg(st, name, "acquire", NULL);
		ck_assert_int_eq(lease_cas_create(st, name, &a[i]), 0);
	}
	ck_assert_int_eq(testrepo_git(NULL, 0, dir, "pack-refs --all"), 0);
	snprintf(loose, sizeof(loose), "%s/refs/leases/p0", dir);
	ck_assert_int_eq(stat(loose, &sb), -1);

	/* Replace a packed ref; delete a packed ref; CAS mismatch on a packed ref. */
	b = write_msg(st, "p0", "heartbeat", &a[0]);
	ck_assert_int_eq(lease_cas_replace(st, "p0", &a[0], &b), 0);
	ck_assert_int_eq(lease_cas_delete(st, "p1", &a[1]), 0);
	ck_assert_int_eq(lease_cas_delete(st, "p2", &a[3]), LEASE_ECAS);
	ck_assert_int_eq(lease_cas_create(st, "p3", &a[3]), LEASE_ECAS);
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	ck_assert_uint_eq(ns.count, 3);
	ck_assert_str_eq(ns.leases[0].name, "p0");
	ck_assert(lease_oid_equal(&ns.leases[0].oid, &b));
	ck_assert_str_eq(ns.leases[1].name, "p2");
	lease_namespace_clear(&ns);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), dir,
	                              "for-each-ref --format='%(refname)' refs/leases"),
	                 0);
	ck_assert_str_eq(out, "refs/leases/p0\nrefs/leases/p2\nrefs/leases/p3\n");

	/* After git gc (objects packed, refs packed) everything still works. */
	ck_assert_int_eq(testrepo_git(NULL, 0, dir, "gc -q --prune=now"), 0);
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	ck_assert_uint_eq(ns.count, 3);
	ck_assert_int_eq(ns.leases[0].payload_rc, 0);
	ck_assert(lease_oid_equal(&ns.leases[0].parent_commit.oid, &a[0]));
	lease_namespace_clear(&ns);
	ck_assert_int_eq(lease_cas_delete(st, "p0", &b), 0);
	ck_assert_int_eq(lease_cas_delete(st, "p2", &a[2]), 0);
	b = write_msg(st, "p3", "heartbeat", &a[3]);
	ck_assert_int_eq(lease_cas_replace(st, "p3", &a[3], &b), 0);
	a[1] = write_msg(st, "p1", "acquire", NULL);
	ck_assert_int_eq(lease_cas_create(st, "p1", &a[1]), 0); /* re-create after delete */
	hex(hb, &b);
	{
		char want[256], h1[41];
		hex(h1, &a[1]);
		snprintf(want, sizeof(want), "%s refs/leases/p1\n%s refs/leases/p3\n", h1, hb);
		assert_lease_refs(dir, want);
	}
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

static int race_trials(void)
{
	const char *e = getenv("REFLEASE_RACE_TRIALS");
	long n = e ? strtol(e, NULL, 10) : 0;

	return n > 0 ? (int)n : 100;
}

/* The pipes as seen by children: fds are inherited; children find them via
 * these globals, set before fork. */
static int g_ready_w = -1, g_go_r = -1;

static void child_wait_start(void)
{
	char c = 'r';

	if (write(g_ready_w, &c, 1) != 1)
		_exit(4);
	(void)!read(g_go_r, &c, 1); /* EOF when the parent closes the go pipe */
}

typedef struct race_arg {
	const char *name;
	const lease_oid *olds; /* per-child old oid for deleters */
	int per_child_names;
} race_arg;

/* Exit 0: won; 1: lost the CAS; 2: other error. */
static int creator(const char *dir, int i, void *arg)
{
	const race_arg *ra = arg;
	lease_store *st = NULL;
	char spec[600];
	lease_oid oid;
	char msg[256];
	int rc;

	snprintf(spec, sizeof(spec), "local:%s", dir);
	if (lease_store_open(&st, spec, NULL, NULL, 0) != 0)
		_exit(2);
	snprintf(msg, sizeof(msg), "%s: acquire claimed by c%d on h\n\n{}\n", ra->name, i);
	if (lease_write_commit(&oid, st, NULL, msg) != 0)
		_exit(2);
	child_wait_start();
	rc = lease_cas_create(st, ra->name, &oid);
	lease_store_free(st);
	_exit(rc == 0 ? 0 : rc == LEASE_ECAS ? 1 : 2);
}

static int deleter(const char *dir, int i, void *arg)
{
	const race_arg *ra = arg;
	lease_store *st = NULL;
	char spec[600], name[32];
	int rc, k = ra->per_child_names ? i % ra->per_child_names : 0;

	snprintf(spec, sizeof(spec), "local:%s", dir);
	if (lease_store_open(&st, spec, NULL, NULL, 0) != 0)
		_exit(2);
	snprintf(name, sizeof(name), "d%d", k);
	child_wait_start();
	rc = lease_cas_delete(st, name, &ra->olds[k]);
	lease_store_free(st);
	_exit(rc == 0 ? 0 : rc == LEASE_ECAS ? 1 : 2);
}

static void run_race(int n, int (*fn)(const char *, int, void *), const char *dir, void *arg,
                     int *codes)
{
	int ready[2], go[2], i;
	pid_t pids[64];
	char c;

	ck_assert_int_le(n, 64);
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go), 0);
	g_ready_w = ready[1];
	g_go_r = go[0];
	for (i = 0; i < n; i++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(ready[0]);
			close(go[1]);
			_exit(fn(dir, i, arg));
		}
		pids[i] = pid;
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	close(go[1]);
	close(ready[0]);
	for (i = 0; i < n; i++) {
		int status = 0;
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	}
}

/* 16 forked creators on one absent ref, many trials: exactly one winner every
 * time, and the ref holds the winner's commit (protocol.md §9; F03, F23). */
START_TEST(race_16_creators_one_winner)
{
	char dir[512], name[32];
	int trial, trials = race_trials(), codes[16], i;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	for (trial = 0; trial < trials; trial++) {
		race_arg ra = {name, NULL, 0};
		int winners = 0, losers = 0, w = -1;
		lease_store *st;
		lease_ref_state s;

		snprintf(name, sizeof(name), "race-%d", trial);
		run_race(16, creator, dir, &ra, codes);
		for (i = 0; i < 16; i++) {
			if (codes[i] == 0) {
				winners++;
				w = i;
			} else if (codes[i] == 1) {
				losers++;
			}
		}
		ck_assert_msg(winners == 1 && losers == 15,
		              "trial %d: %d winners, %d losers (codes: %d %d %d ...)", trial,
		              winners, losers, codes[0], codes[1], codes[2]);
		st = open_store(dir);
		ck_assert_int_eq(lease_fetch_ref(&s, st, name), 0);
		ck_assert_int_eq(s.present, 1);
		{
			char want[64];
			snprintf(want, sizeof(want), "acquire claimed by c%d on h", w);
			ck_assert_msg(strstr(s.commit.message, want) != NULL,
			              "trial %d: ref holds %s, winner was %d", trial,
			              s.commit.message, w);
		}
		lease_ref_state_clear(&s);
		lease_store_free(st);
	}
	testrepo_remove(dir);
}
END_TEST

/* Concurrent deleters of packed refs: every delete that won stays deleted (no
 * packed-refs resurrection), and a contested ref has exactly one winner. */
START_TEST(concurrent_deleters_packed)
{
	enum { NREFS = 12, NCHILD = 16 };
	char dir[512], out[4096];
	lease_oid olds[NREFS];
	int trial, i, codes[NCHILD];

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	for (trial = 0; trial < 5; trial++) {
		lease_store *st = open_store(dir);
		race_arg ra = {NULL, olds, NREFS};
		int won[NREFS] = {0};

		for (i = 0; i < NREFS; i++) {
			char name[32];
			snprintf(name, sizeof(name), "d%d", i);
			olds[i] = write_msg(st, name, "acquire", NULL);
			ck_assert_int_eq(lease_cas_create(st, name, &olds[i]), 0);
		}
		lease_store_free(st);
		ck_assert_int_eq(testrepo_git(NULL, 0, dir, "pack-refs --all"), 0);
		run_race(NCHILD, deleter, dir, &ra, codes);
		for (i = 0; i < NCHILD; i++) {
			ck_assert_msg(codes[i] == 0 || codes[i] == 1, "child %d exit %d", i,
			              codes[i]);
			if (codes[i] == 0)
				won[i % NREFS]++;
		}
		for (i = 0; i < NREFS; i++)
			ck_assert_msg(won[i] == 1, "trial %d: d%d deleted %d times", trial, i,
			              won[i]);
		ck_assert_int_eq(testrepo_git(out, sizeof(out), dir,
		                              "for-each-ref --format='%(refname)' refs/leases"),
		                 0);
		ck_assert_msg(out[0] == '\0', "trial %d: resurrected: %s", trial, out);
	}
	testrepo_remove(dir);
}
END_TEST

/* A loose-ref lock held briefly by another writer is waited out; one held
 * for good is an error, never a lost CAS. */
START_TEST(lock_contention)
{
	char dir[512], lock[700], dlock[700];
	lease_store *st;
	lease_oid a, b, c;
	pid_t pid;
	int fd, status, rc;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	st = open_store(dir);
	a = write_msg(st, "l", "acquire", NULL);
	ck_assert_int_eq(lease_cas_create(st, "l", &a), 0);
	b = write_msg(st, "l", "heartbeat", &a);
	snprintf(lock, sizeof(lock), "%s/refs/leases/l.lock", dir);
	fd = open(lock, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct timespec ts = {0, 150 * 1000000L};
		nanosleep(&ts, NULL);
		unlink(lock);
		_exit(0);
	}
	ck_assert_int_eq(lease_cas_replace(st, "l", &a, &b), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);

	/* Held for good (a crashed writer's lock, issue 8 chaos): LEASE_ELOCKED
	 * naming the lock, a known outcome (the write was not made), not ECAS. */
	c = write_msg(st, "l", "heartbeat", &b);
	fd = open(lock, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	rc = lease_cas_replace(st, "l", &b, &c);
	ck_assert_int_eq(rc, LEASE_ELOCKED);
	ck_assert(strstr(lease_store_last_error(st), "lock") != NULL);
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	unlink(lock);

	/* git's packed-refs.lock held for good (a crashed git): deletes wait
	 * for it, then LEASE_ELOCKED naming it; a stale reflease-delete.lock no
	 * longer stands in a delete's way (issue 14: deletes take git's locks). */
	snprintf(dlock, sizeof(dlock), "%s/packed-refs.lock", dir);
	fd = open(dlock, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(lease_cas_delete(st, "l", &b), LEASE_ELOCKED);
	ck_assert_msg(strstr(lease_store_last_error(st), "packed-refs.lock") != NULL, "%s",
	              lease_store_last_error(st));
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_int_eq(access(lock, F_OK), -1); /* the ref lock was released */
	unlink(dlock);
	snprintf(dlock, sizeof(dlock), "%s/reflease-delete.lock", dir);
	fd = open(dlock, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(lease_cas_delete(st, "l", &b), 0);
	unlink(dlock);
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

/* Issue 14 item 1: a delete re-reads packed-refs under packed-refs.lock. A
 * git pack-refs (simulated: it holds the lock, then renames its new
 * packed-refs into place) that finishes while the delete waits is kept;
 * libgit2's git_reference_delete would write back the copy it read before
 * locking (libgit2#5003). */
START_TEST(delete_rereads_packed_refs_under_lock)
{
	char dir[512], plock[700], packed[700], out[4096], hx[41], hy[41], hy2[41], text[512];
	lease_store *st;
	lease_oid x, y, y2;
	pid_t pid;
	int fd, status;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	st = open_store(dir);
	x = write_msg(st, "x", "acquire", NULL);
	y = write_msg(st, "y", "acquire", NULL);
	y2 = write_msg(st, "y", "heartbeat", &y);
	ck_assert_int_eq(lease_cas_create(st, "x", &x), 0);
	ck_assert_int_eq(lease_cas_create(st, "y", &y), 0);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), dir, "pack-refs --all --prune"), 0);
	hex(hx, &x);
	hex(hy, &y);
	hex(hy2, &y2);
	snprintf(plock, sizeof(plock), "%s/packed-refs.lock", dir);
	snprintf(packed, sizeof(packed), "%s/packed-refs", dir);
	/* "git pack-refs" takes the lock ... */
	fd = open(plock, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		lease_store *cst = open_store(dir);
		_exit(lease_cas_delete(cst, "x", &x) == 0 ? 0 : 1);
	}
	{
		struct timespec ts = {0, 300 * 1000000L};
		nanosleep(&ts, NULL);
	}
	/* ... and commits a packed-refs in which y moved on (what a writer did
	 * while pack-refs ran). */
	snprintf(text, sizeof(text),
	         "# pack-refs with: peeled fully-peeled sorted \n%s refs/leases/x\n%s "
	         "refs/leases/y\n",
	         hx, hy2);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ck_assert_int_eq(rename(plock, packed), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(text, sizeof(text), "%s refs/leases/y\n", hy2);
	assert_lease_refs(dir, text);
	(void)hy;
	ck_assert_int_eq(access(plock, F_OK), -1);
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

/* Issue 14 item 4: a directory/file conflict names the conflicting ref and
 * is a configuration error (78), a known outcome — not "internal". */
START_TEST(df_conflict_names_the_ref)
{
	char dir[512], out[4096], args[256], h[41];
	lease_store *st;
	lease_oid a;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	st = open_store(dir);
	a = write_msg(st, "a", "acquire", NULL);
	hex(h, &a);
	snprintf(args, sizeof(args), "update-ref refs/leases/a/b %s", h);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), dir, args), 0);
	ck_assert_int_eq(lease_cas_create(st, "a", &a), LEASE_ECONFIG);
	ck_assert_msg(strstr(lease_store_last_error(st), "refs/leases/a/b") != NULL, "%s",
	              lease_store_last_error(st));
	ck_assert_int_eq(lease_store_last_cas_error(st)->outcome, LEASE_OUTCOME_KNOWN);
	/* packed, too */
	ck_assert_int_eq(testrepo_git(out, sizeof(out), dir, "pack-refs --all --prune"), 0);
	ck_assert_int_eq(lease_cas_create(st, "a", &a), LEASE_ECONFIG);
	ck_assert(strstr(lease_store_last_error(st), "refs/leases/a/b") != NULL);
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

/* Issue 14 item 2: a symbolic ref is observed at its file's blob id and
 * replaced only by a CAS on that id (break --force), never written through. */
START_TEST(symbolic_ref_cas)
{
	char dir[512], out[4096];
	lease_store *st;
	lease_ref_state s;
	lease_oid a, seen;

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_NONBARE), 0);
	ck_assert_int_eq(
	        testrepo_git(out, sizeof(out), dir, "symbolic-ref refs/leases/s refs/heads/main"),
	        0);
	st = open_store(dir);
	ck_assert_int_eq(lease_fetch_ref(&s, st, "s"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert_int_eq(s.commit.symbolic, 1);
	ck_assert_int_eq(s.payload_rc, LEASE_EPAYLOAD);
	ck_assert(strstr(s.payload_error, "symbolic ref to refs/heads/main") != NULL);
	seen = s.oid;
	lease_ref_state_clear(&s);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), dir,
	                              "hash-object --stdin <<EOF\nref: refs/heads/main\nEOF"),
	                 0);
	{
		char h[41];
		hex(h, &seen);
		ck_assert_int_eq(strncmp(out, h, 40), 0);
	}
	a = write_msg(st, "s", "break", NULL);
	/* retargeted meanwhile: the CAS on what was seen fails */
	ck_assert_int_eq(
	        testrepo_git(out, sizeof(out), dir, "symbolic-ref refs/leases/s refs/heads/x"), 0);
	ck_assert_int_eq(lease_cas_replace(st, "s", &seen, &a), LEASE_ECAS);
	ck_assert_int_eq(
	        testrepo_git(out, sizeof(out), dir, "symbolic-ref refs/leases/s refs/heads/main"),
	        0);
	ck_assert_int_eq(lease_cas_replace(st, "s", &seen, &a), 0);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), dir, "symbolic-ref -q refs/leases/s"), 1);
	ck_assert_int_eq(lease_fetch_ref(&s, st, "s"), 0);
	ck_assert(lease_oid_equal(&s.oid, &a));
	lease_ref_state_clear(&s);
	lease_store_free(st);
	testrepo_remove(dir);
}
END_TEST

/* lease_global_init (issue 17): the one initialisation of libgit2 and
 * libcurl, done once; a local: store open goes through libgit2's once
 * (issue 43). Each Check test
 * runs in its own process, so the counts below start from zero. */
START_TEST(global_init_once)
{
	lease_store *st = NULL;
	char dir[512], spec[600], err[512];

	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	ck_assert_int_eq(lease_global_init(), 0);
	ck_assert_int_eq(lease_global_init(), 0);
	/* libgit2 counts its initialisations: ours was one, whatever the calls */
	ck_assert_int_eq(git_libgit2_init(), 2);
	git_libgit2_shutdown();
	snprintf(spec, sizeof(spec), "local:%s", dir);
	ck_assert_int_eq(lease_store_open(&st, spec, NULL, err, sizeof(err)), 0);
	lease_store_free(st);
	ck_assert_int_eq(git_libgit2_init(), 2); /* opening a store did not add one */
	git_libgit2_shutdown();
	testrepo_remove(dir);
}
END_TEST

/* Issue 43: a local: store initialises libgit2 and never loads libcurl
 * (dlopen()ed by github: stores only; the runner does not link it). */
START_TEST(local_store_loads_no_libcurl)
{
	lease_store *st = NULL;
	char dir[512], spec[600], err[512];

	ck_assert_ptr_null(dlopen(REFLEASE_CURL_SONAME, RTLD_LAZY | RTLD_NOLOAD));
	ck_assert_int_eq(testrepo_make(dir, sizeof(dir), TESTREPO_BARE), 0);
	snprintf(spec, sizeof(spec), "local:%s", dir);
	ck_assert_int_eq(lease_store_open(&st, spec, NULL, err, sizeof(err)), 0);
	lease_store_free(st);
	ck_assert_int_eq(git_libgit2_init(), 2); /* the store's, and this one */
	git_libgit2_shutdown();
	ck_assert_ptr_null(dlopen(REFLEASE_CURL_SONAME, RTLD_LAZY | RTLD_NOLOAD));
	/* lease_global_init() keeps its promise: both, libcurl loaded now */
	ck_assert_int_eq(lease_global_init(), 0);
	ck_assert_ptr_nonnull(dlopen(REFLEASE_CURL_SONAME, RTLD_LAZY | RTLD_NOLOAD));
	testrepo_remove(dir);
}
END_TEST

/* core.sharedRepository as git parses it (setup.c git_config_perm) and the
 * modes git's adjust_shared_perm gives (issue 23). */
START_TEST(shared_repository_modes)
{
	static const struct {
		const char *value;
		int want;
	} parse[] = {{NULL, 0},       {"", 0},         {"umask", 0},        {"false", 0},
	             {"0", 0},        {"group", 0660}, {"true", 0660},      {"1", 0660},
	             {"all", 0664},   {"world", 0664}, {"everybody", 0664}, {"2", 0664},
	             {"0666", -0666}, {"0640", -0640}, {"0777", -0666},     {"0440", 0},
	             {"GROUP", 0660}, {"nonsense", 0}};
	static const struct {
		int shared, dir;
		mode_t from, want;
	} modes[] = {
	        {0660, 0, 0600, 0660},   /* a ref file: group read/write */
	        {0660, 0, 0400, 0440},   /* an object: read only stays read only */
	        {0664, 0, 0600, 0664},   /* all: everybody reads */
	        {0660, 1, 0700, 02770},  /* a directory: rwx for the group, setgid */
	        {0664, 1, 0700, 02775},  /* all: everybody searches */
	        {-0640, 0, 0666, 0640},  /* an octal mode replaces the bits */
	        {-0640, 1, 0700, 02750}, /* ... with x copied from r on directories */
	        {0, 0, 0600, 0600},      /* umask: left alone */
	};
	char dir[512], path[600];
	struct stat sb;
	size_t i;

	for (i = 0; i < sizeof(parse) / sizeof(parse[0]); i++)
		ck_assert_msg(lease__fs_shared_perm(parse[i].value) == parse[i].want, "%s: %d",
		              parse[i].value ? parse[i].value : "(null)",
		              lease__fs_shared_perm(parse[i].value));
	snprintf(dir, sizeof(dir), "%s/reflease-shared-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(path, sizeof(path), "%s/p%zu", dir, i);
		if (modes[i].dir)
			ck_assert_int_eq(mkdir(path, 0700), 0);
		else
			ck_assert_int_ge(close(open(path, O_CREAT | O_WRONLY, 0600)), 0);
		ck_assert_int_eq(chmod(path, modes[i].from), 0);
		ck_assert_int_eq(lease__fs_adjust_shared_perm(modes[i].shared, path), 0);
		ck_assert_int_eq(stat(path, &sb), 0);
		ck_assert_msg((sb.st_mode & 07777) == modes[i].want, "case %zu: %04o, want %04o", i,
		              (unsigned)(sb.st_mode & 07777), (unsigned)modes[i].want);
		if (modes[i].dir)
			rmdir(path);
		else
			unlink(path);
	}
	rmdir(dir);
}
END_TEST

Suite *local_suite(void)
{
	Suite *s = suite_create("local");

	suitefix_add(s, "local", 30, NULL, ONE(global_init_once), ONE(local_store_loads_no_libcurl),
	             ONE(repo_kinds), ONE(open_errors), ONE(init_and_git_cli_crosscheck),
	             ONE(commit_time_from_store_clock), ONE(packed_refs_and_gc),
	             ONE(lock_contention), ONE(delete_rereads_packed_refs_under_lock),
	             ONE(df_conflict_names_the_ref), ONE(symbolic_ref_cas),
	             ONE(shared_repository_modes), NULL);
	suitefix_add(s, "race", 120, NULL, ONE(race_16_creators_one_winner),
	             ONE(concurrent_deleters_packed), NULL);
	return s;
}
