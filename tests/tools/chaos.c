/* chaos: crash writers of a local store at random points (issue 8).
 *
 *   chaos STORE_PATH REFLEASE_BIN OPS [SEED]      run the chaos, then check
 *   chaos --check STORE_PATH                      only check
 *
 * Runs up to three writers at once on five leases (c0..c4) until OPS
 * operations have started. A writer is either the real binary doing one
 * operation (acquire, heartbeat, transition, reacquire, release, break
 * --force; the token is read from the store the way a holder would know it),
 * or a forked process looping over the same operations through the library.
 * Each writer gets SIGKILL after a random delay (some binaries finish first).
 * Every 24 writers the run pauses and, with no writer alive, removes ref lock
 * files a killed writer left (what `reconcile --reap` does for an old lock);
 * the last round's are left for the caller to find.
 *
 * The check (also run after the chaos) walks every ref under refs/leases/:
 * each commit's tree is the empty tree, its message parses as a lease
 * payload for that name, each commit has at most one parent, and along the
 * chain `transitions` never decreases, stays equal while the token stays, and
 * rises by exactly one when the token changes (protocol.md §5). All five
 * leases must still exist (none lost). Prints one summary line; exit 0 when
 * every check passed, 1 otherwise. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reflease.h"

#define NLEASES 5
#define NSLOTS  3
#define ROUND   24

static const char *const owners[] = {"o1", "o2"};
static const char *const hosts[] = {"h1", "h2"};
static const char *const phases[] = {"claimed", "working", "review"};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(double ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ms / 1000.0);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
	nanosleep(&ts, NULL);
}

/* The current token of lease @p name ("" when unreadable or absent). */
static void current_token(lease_store *st, const char *name, char *out)
{
	lease_ref_state s;

	out[0] = '\0';
	memset(&s, 0, sizeof(s));
	if (lease_fetch_ref(&s, st, name) == 0 && s.present && s.payload_rc == 0)
		memcpy(out, s.payload.lease_token, LEASE_TOKEN_HEXSZ + 1);
	lease_ref_state_clear(&s);
}

/* One random operation through the library. */
static void lib_op(lease_store *st, unsigned int *seed)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;
	char name[16], token[LEASE_TOKEN_HEXSZ + 1];
	lease_result r;
	int op = (int)(rand_r(seed) % 6);

	snprintf(name, sizeof(name), "c%d", (int)(rand_r(seed) % NLEASES));
	o.owner = owners[rand_r(seed) % 2];
	o.host = hosts[rand_r(seed) % 2];
	o.ttl_seconds = 5;
	current_token(st, name, token);
	o.lease_token = token;
	switch (op) {
	case 0: lease_acquire(&r, st, name, &o); break;
	case 1: lease_heartbeat(&r, st, name, &o); break;
	case 2:
		o.to = (lease_phase)(LEASE_PHASE_CLAIMED + (int)(rand_r(seed) % 3));
		lease_transition(&r, st, name, &o);
		break;
	case 3: lease_reacquire(&r, st, name, &o); break;
	case 4: lease_release(&r, st, name, &o); break;
	default:
		o.force = 1;
		lease_break(&r, st, name, &o);
		break;
	}
}

/* A library writer: loops over random operations until killed. */
static void lib_writer(const char *spec, unsigned int seed, long *started)
{
	lease_store *st = NULL;
	char err[256];

	if (lease_store_open(&st, spec, NULL, err, sizeof(err)) < 0)
		_exit(3);
	for (;;) {
		__atomic_add_fetch(started, 1, __ATOMIC_SEQ_CST);
		lib_op(st, &seed);
	}
}

/* A binary writer: execs one `reflease` operation. */
static void bin_writer(const char *spec, const char *bin, lease_store *st, unsigned int seed)
{
	char name[16], token[LEASE_TOKEN_HEXSZ + 1];
	const char *argv[12];
	int i = 0, op = (int)(rand_r(&seed) % 6), fd;

	snprintf(name, sizeof(name), "c%d", (int)(rand_r(&seed) % NLEASES));
	current_token(st, name, token);
	setenv("REFLEASE_STORE", spec, 1);
	setenv("REFLEASE_OWNER", owners[rand_r(&seed) % 2], 1);
	setenv("REFLEASE_HOST", hosts[rand_r(&seed) % 2], 1);
	argv[i++] = bin;
	switch (op) {
	case 0: argv[i++] = "acquire"; break;
	case 1: argv[i++] = "heartbeat"; break;
	case 2: argv[i++] = "transition"; break;
	case 3: argv[i++] = "reacquire"; break;
	case 4: argv[i++] = "release"; break;
	default:
		argv[i++] = "break";
		argv[i++] = "--force";
		break;
	}
	if (op >= 1 && op <= 4) {
		argv[i++] = "--lease-token";
		argv[i++] = token[0] ? token : "0123456789abcdef0123456789abcdef";
	}
	if (op == 0 || op == 1 || op == 3) {
		argv[i++] = "--ttl";
		argv[i++] = "5";
	}
	if (op == 2) {
		argv[i++] = "--to";
		argv[i++] = phases[rand_r(&seed) % 3];
	}
	argv[i++] = "--";
	argv[i++] = name;
	argv[i] = NULL;
	if ((fd = open("/dev/null", O_WRONLY)) >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execv(bin, (char *const *)argv);
	_exit(127);
}

/* Remove ref lock files left under refs/leases/ (no writer is alive). */
static int clear_locks(const char *path, int remove_them)
{
	char dir[4096], f[4400];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/refs/leases", path);
	if (!(d = opendir(dir))) {
		snprintf(dir, sizeof(dir), "%s/.git/refs/leases", path);
		if (!(d = opendir(dir)))
			return 0;
	}
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l > 5 && strcmp(e->d_name + l - 5, ".lock") == 0) {
			n++;
			snprintf(f, sizeof(f), "%s/%s", dir, e->d_name);
			if (remove_them)
				unlink(f);
		}
	}
	closedir(d);
	return n;
}

static int check(const char *path, long *commits_out)
{
	git_repository *repo = NULL;
	git_oid empty;
	int bad = 0, i;
	long commits = 0;

	git_oid_fromstr(&empty, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
	if (git_repository_open(&repo, path) < 0) {
		fprintf(stderr, "chaos: cannot open %s\n", path);
		return 1;
	}
	for (i = 0; i < NLEASES; i++) {
		char name[16], ref[32], err[256];
		git_oid oid;
		git_commit *c = NULL;
		lease_payload prev;
		int have_prev = 0, depth = 0;

		snprintf(name, sizeof(name), "c%d", i);
		snprintf(ref, sizeof(ref), "refs/leases/%s", name);
		if (git_reference_name_to_id(&oid, repo, ref) < 0) {
			fprintf(stderr, "chaos: %s lost\n", ref);
			bad++;
			continue;
		}
		/* newest first: the child of each step is the previous one read */
		while (git_commit_lookup(&c, repo, &oid) == 0) {
			const char *msg = git_commit_message_raw(c);
			lease_payload p;
			lease_op op;
			unsigned int np = git_commit_parentcount(c);

			commits++;
			depth++;
			if (!git_oid_equal(git_commit_tree_id(c), &empty)) {
				fprintf(stderr, "chaos: %s: %s: not the empty tree\n", ref,
				        git_oid_tostr_s(&oid));
				bad++;
			}
			if (np > 1) {
				fprintf(stderr, "chaos: %s: merge commit\n", ref);
				bad++;
			}
			if (lease_message_parse(&p, &op, msg, strlen(msg), name, err, sizeof(err)) <
			    0) {
				fprintf(stderr, "chaos: %s: %s: %s\n", ref, git_oid_tostr_s(&oid),
				        err);
				bad++;
			} else if (have_prev) {
				/* prev is the child of p */
				int same = strcmp(prev.lease_token, p.lease_token) == 0;

				if (prev.transitions < p.transitions ||
				    (same && prev.transitions != p.transitions) ||
				    (!same && prev.transitions != p.transitions + 1)) {
					fprintf(stderr,
					        "chaos: %s: transitions %lld -> %lld with the "
					        "token %s\n",
					        ref, (long long)p.transitions,
					        (long long)prev.transitions,
					        same ? "kept" : "changed");
					bad++;
				}
			}
			if (lease_message_parse(&prev, &op, msg, strlen(msg), name, err,
			                        sizeof(err)) == 0)
				have_prev = 1;
			else
				have_prev = 0;
			if (np == 0) {
				git_commit_free(c);
				break;
			}
			git_oid_cpy(&oid, git_commit_parent_id(c, 0));
			git_commit_free(c);
			c = NULL;
		}
		if (depth == 0) {
			fprintf(stderr, "chaos: %s: unreadable tip\n", ref);
			bad++;
		}
	}
	git_repository_free(repo);
	*commits_out = commits;
	return bad;
}

typedef struct slot {
	pid_t pid;
	double deadline;
} slot;

int main(int argc, char **argv)
{
	lease_store *st = NULL;
	char spec[4200], err[256];
	long ops, *started, commits = 0;
	unsigned int seed;
	slot slots[NSLOTS];
	int i, round_left = ROUND, spawned = 0, killed = 0, finished = 0, recovered = 0, bad;
	double t0 = mono();

	git_libgit2_init();
	if (argc == 3 && strcmp(argv[1], "--check") == 0) {
		bad = check(argv[2], &commits);
		printf("chaos check: %ld commits, %d stale locks, %d problems\n", commits,
		       clear_locks(argv[2], 0), bad);
		return bad ? 1 : 0;
	}
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: chaos STORE_PATH REFLEASE_BIN OPS [SEED] | chaos --check "
		                "STORE_PATH\n");
		return 2;
	}
	ops = strtol(argv[3], NULL, 10);
	seed = argc == 5 ? (unsigned int)strtoul(argv[4], NULL, 10)
	                 : (unsigned int)getpid() ^ (unsigned int)time(NULL);
	printf("chaos: seed %u\n", seed);
	fflush(stdout);
	snprintf(spec, sizeof(spec), "local:%s", argv[1]);
	started =
	        mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (started == MAP_FAILED || lease_store_open(&st, spec, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "chaos: %s\n", err);
		return 1;
	}
	*started = 0;
	for (i = 0; i < NLEASES; i++) { /* every lease exists before the chaos */
		lease_op_options o = LEASE_OP_OPTIONS_INIT;
		lease_result r;
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		o.owner = "o1";
		o.host = "h1";
		o.ttl_seconds = 5;
		if (lease_acquire(&r, st, name, &o) < 0 && r.status != LEASE_STATUS_ALREADY_HELD &&
		    r.status != LEASE_STATUS_HELD) {
			fprintf(stderr, "chaos: setup acquire %s: %s\n", name, r.message);
			return 1;
		}
	}
	memset(slots, 0, sizeof(slots));
	while (__atomic_load_n(started, __ATOMIC_SEQ_CST) < ops || slots[0].pid || slots[1].pid ||
	       slots[2].pid) {
		int more = __atomic_load_n(started, __ATOMIC_SEQ_CST) < ops;
		int busy = 0;

		for (i = 0; i < NSLOTS; i++) {
			int status;

			if (slots[i].pid &&
			    waitpid(slots[i].pid, &status, WNOHANG) == slots[i].pid) {
				finished++;
				slots[i].pid = 0;
			} else if (slots[i].pid && mono() >= slots[i].deadline) {
				kill(slots[i].pid, SIGKILL);
				waitpid(slots[i].pid, &status, 0);
				killed++;
				slots[i].pid = 0;
			}
			busy += slots[i].pid != 0;
		}
		/* a round ends: once no writer is alive, clear the locks killed writers left */
		if (more && round_left == 0 && busy == 0) {
			recovered += clear_locks(argv[1], 1);
			round_left = ROUND;
		}
		for (i = 0; i < NSLOTS && more && round_left > 0; i++) {
			unsigned int s = rand_r(&seed);
			int library = s % 3 == 0;
			pid_t pid;

			if (slots[i].pid)
				continue;
			if ((pid = fork()) < 0) {
				perror("chaos: fork");
				return 1;
			}
			if (pid == 0) {
				if (library)
					lib_writer(spec, s, started);
				__atomic_add_fetch(started, 1, __ATOMIC_SEQ_CST);
				bin_writer(spec, argv[2], st, s);
			}
			slots[i].pid = pid;
			/* library loops: 2..60 ms; one binary operation: 0..80 ms */
			slots[i].deadline =
			        mono() +
			        (library ? 2.0 + (double)(s >> 8) / (double)(RAND_MAX >> 8) * 58.0
			                 : (double)(s >> 8) / (double)(RAND_MAX >> 8) * 80.0) /
			                1000.0;
			spawned++;
			round_left--;
		}
		nap_ms(0.5);
	}
	lease_store_free(st);
	bad = check(argv[1], &commits);
	printf("chaos: %ld operations started by %d writers (%d killed, %d finished) in %.1f s; "
	       "%d stale ref locks recovered between rounds, %d left; %ld commits checked, %d "
	       "problems\n",
	       __atomic_load_n(started, __ATOMIC_SEQ_CST), killed + finished, killed, finished,
	       mono() - t0, recovered, clear_locks(argv[1], 0), commits, bad);
	git_libgit2_shutdown();
	return bad ? 1 : 0;
}
