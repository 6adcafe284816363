#define _DEFAULT_SOURCE
/* The local waiter's wake (lib/store/local_watch.c, issue 43 item 3): a
 * writer's lock files ("x.lock", reflease's owner file, packed-refs.lock)
 * and another lease's rename do not bring the re-read forward; the rename
 * of the lock into place does; a change that makes no watched event is
 * still seen at the re-read cap; the inotify descriptor is kept by the
 * caller's slot between waits. Real files and inotify, no store: the probe
 * reads the ref file's first byte as its oid. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/backend.h"
#include "support/suitefix.h"
#include "util/util.h"

/* What the waiter's probe calls do, in order: each records its time, reads
 * the ref, then runs its step (the writer's next move). */
typedef struct watch_fx {
	char dir[256]; /* the "commondir" */
	int64_t at[8]; /* each probe's time, ms */
	int calls;
	void (*step[8])(struct watch_fx *);
} watch_fx;

static watch_fx *fx;

static void path_of(char *out, size_t n, const char *rel)
{
	snprintf(out, n, "%s/%s", fx->dir, rel);
}

static void put(const char *rel, char c, int do_close)
{
	char p[512];
	int fd;

	path_of(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, &c, 1), 1);
	if (do_close)
		close(fd); /* else left open: the test process's exit closes it */
}

static void mv(const char *from, const char *to)
{
	char a[512], b[512];

	path_of(a, sizeof(a), from);
	path_of(b, sizeof(b), to);
	ck_assert_int_eq(rename(a, b), 0);
}

static int probe(lease_transport *t, const char *refname, lease_probe *p)
{
	char path[512], c = 0;
	int fd;

	(void)t;
	ck_assert_int_lt(fx->calls, 8);
	fx->at[fx->calls] = lease__mono_ms();
	path_of(path, sizeof(path), refname);
	memset(p, 0, sizeof(*p));
	if ((fd = open(path, O_RDONLY)) >= 0) {
		p->present = read(fd, &c, 1) == 1;
		p->oid.id[0] = (unsigned char)c;
		close(fd);
	}
	if (fx->step[fx->calls])
		fx->step[fx->calls](fx);
	fx->calls++;
	return 0;
}

/* A reflease writer up to its rename, and noise beside it. */
static void writer_locks(watch_fx *f)
{
	char owner[512], lock[512];

	(void)f;
	put("refs/leases/x..owner-1-00000001.lock", 'b', 1);
	path_of(owner, sizeof(owner), "refs/leases/x..owner-1-00000001.lock");
	path_of(lock, sizeof(lock), "refs/leases/x.lock");
	ck_assert_int_eq(link(owner, lock), 0);
	put("packed-refs.lock", 'p', 1);   /* git pack-refs starting */
	put("refs/leases/y.lock", 'y', 1); /* another lease written */
	mv("refs/leases/y.lock", "refs/leases/y");
}

static void writer_rename(watch_fx *f)
{
	(void)f;
	mv("refs/leases/x.lock", "refs/leases/x");
}

/* A ref written in place and left open: no event this watch asks for. */
static void silent_write(watch_fx *f)
{
	(void)f;
	put("refs/leases/x", 'c', 0);
}

static void setup(watch_fx *f)
{
	char p[512];

	memset(f, 0, sizeof(*f));
	fx = f;
	snprintf(f->dir, sizeof(f->dir), "%s/reflease-watch.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	path_of(p, sizeof(p), "refs");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	path_of(p, sizeof(p), "refs/leases");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	put("refs/leases/x", 'a', 1);
}

static void teardown(watch_fx *f)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int wait_x(int *slot)
{
	lease_oid known;

	memset(&known, 0, sizeof(known));
	known.id[0] = 'a';
	return lease__fs_wait_ref_change(NULL, NULL, probe, fx->dir, "refs/leases/x", 1, &known,
	                                 5000, slot);
}

/* Lock files do not wake the waiter; the rename does. The first re-read
 * after the locks comes at the cap (never earlier: not timing-sensitive);
 * the one after the rename before the cap in at least one of three rounds
 * (a missed event would make all three wait the cap). */
START_TEST(test_lock_files_do_not_wake)
{
	watch_fx f;
	int round, fast = 0, slot = -1, kept = -1;

	for (round = 0; round < 3; round++) {
		setup(&f);
		f.step[0] = writer_locks;
		f.step[1] = writer_rename;
		ck_assert_int_eq(wait_x(&slot), 1);
		ck_assert_msg(f.calls == 3, "%d reads (3: first, cap, after the rename)", f.calls);
		ck_assert_msg(f.at[1] - f.at[0] >= LEASE_WATCH_CAP_MS - 1,
		              "re-read %lld ms after the lock files appeared",
		              (long long)(f.at[1] - f.at[0]));
		fast += f.at[2] - f.at[1] < LEASE_WATCH_CAP_MS - 10;
		/* the descriptor is kept between waits, and reused */
		ck_assert_int_ge(slot, 0);
		if (kept >= 0)
			ck_assert_int_eq(slot, kept);
		kept = slot;
		teardown(&f);
	}
	ck_assert_msg(fast >= 1, "the rename never woke the waiter before the cap");
	close(slot);
}
END_TEST

/* A change no watched event reports is seen at the cap after the last
 * read, not later. */
START_TEST(test_unwatched_change_seen_at_cap)
{
	watch_fx f;
	int slot = -1;

	setup(&f);
	f.step[0] = silent_write;
	ck_assert_int_eq(wait_x(&slot), 1);
	ck_assert_int_eq(f.calls, 2);
	ck_assert_msg(f.at[1] - f.at[0] >= LEASE_WATCH_CAP_MS - 1 && f.at[1] - f.at[0] < 2000,
	              "seen %lld ms after the write", (long long)(f.at[1] - f.at[0]));
	if (slot >= 0)
		close(slot);
	teardown(&f);
}
END_TEST

/* Without a change the wait ends at its timeout, re-reading at the cap. */
START_TEST(test_timeout_reads_at_cap)
{
	watch_fx f;
	lease_oid known;
	int slot = -1;

	setup(&f);
	memset(&known, 0, sizeof(known));
	known.id[0] = 'a';
	ck_assert_int_eq(lease__fs_wait_ref_change(NULL, NULL, probe, f.dir, "refs/leases/x", 1,
	                                           &known, 400, &slot),
	                 0);
	ck_assert_msg(f.calls >= 2 && f.calls <= 4, "%d reads in 400 ms (cap %d ms)", f.calls,
	              LEASE_WATCH_CAP_MS);
	if (slot >= 0)
		close(slot);
	teardown(&f);
}
END_TEST

Suite *local_watch_suite(void)
{
	Suite *s = suite_create("local_watch");

	suitefix_add(s, "wake", 30, NULL, ONE(test_lock_files_do_not_wake),
	             ONE(test_unwatched_change_seen_at_cap), ONE(test_timeout_reads_at_cap), NULL);
	return s;
}
