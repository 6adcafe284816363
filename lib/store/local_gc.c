/* Maintenance of a local store (protocol.md §9 "Local store maintenance",
 * issue 29; issue 40 G1): git gc in the repository the local transport has
 * open, with git's messages in the C locale (LC_ALL=C, LANGUAGE unset), so
 * that the one message a retry depends on is git's own stable wording in
 * any user's locale. */
#define _DEFAULT_SOURCE
#include "backend.h"
#include "frontend.h"
#include "util/util.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The environment git runs in: this process's, without LANGUAGE, LANG and
 * LC_*, with LC_ALL=C (git's messages untranslated, issue 40 G1). A malloc'd
 * array of borrowed strings, or NULL. */
static char **c_locale_env(void)
{
	static char c_all[] = "LC_ALL=C";
	size_t n = 0, k = 0;
	char **env, **e;

	for (e = environ; *e; e++)
		n++;
	if (!(env = calloc(n + 2, sizeof(*env))))
		return NULL;
	for (e = environ; *e; e++)
		if (strncmp(*e, "LC_", 3) != 0 && strncmp(*e, "LANG=", 5) != 0 &&
		    strncmp(*e, "LANGUAGE=", 9) != 0)
			env[k++] = *e;
	env[k++] = c_all;
	env[k] = NULL;
	return env;
}

/* Read @p fd to its end: the first @p len - 1 bytes into @p buf (NUL
 * terminated, @p len > 0), the rest read and dropped. */
static void slurp_fd(int fd, char *buf, size_t len)
{
	char drop[512];
	size_t n = 0;
	ssize_t got;

	for (;;) {
		size_t room = len - 1 - n;

		got = room ? read(fd, buf + n, room) : read(fd, drop, sizeof(drop));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (room)
			n += (size_t)got;
	}
	buf[n] = '\0';
}

/* Run git (found on PATH) with @p args in the C locale; its standard output
 * (@p out) and standard error (@p err) kept, cut to the buffer's size. The
 * exit status (128 + signal), or LEASE_ECONFIG (git not started) /
 * LEASE_EINTERNAL (a pipe or wait failed) with the cause in @p err. */
static int run_git(char *const args[], char *out, size_t outlen, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, rc, status;
	char **env;
	pid_t pid;

	if (pipe(po) < 0 || pipe(pe) < 0) {
		lease__error_set(err, errlen, "a pipe for git: %s", strerror(errno));
		if (po[0] >= 0) {
			close(po[0]);
			close(po[1]);
		}
		return LEASE_EINTERNAL;
	}
	if (!(env = c_locale_env())) {
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return LEASE_ENOMEM;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_addclose(&fa, po[0]);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawn_file_actions_addclose(&fa, pe[0]);
	rc = posix_spawnp(&pid, "git", &fa, NULL, args, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(po[1]);
	close(pe[1]);
	if (rc == 0) {
		/* git writes little: standard output first, then standard
		 * error (git gc writes one of the two, far below a pipe's size) */
		slurp_fd(po[0], out, outlen);
		slurp_fd(pe[0], err, errlen);
	}
	close(po[0]);
	close(pe[0]);
	if (rc != 0) {
		lease__error_set(err, errlen, "git could not be started: %s", strerror(rc));
		return LEASE_ECONFIG;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			lease__error_set(err, errlen, "waiting for git: %s", strerror(errno));
			return LEASE_EINTERNAL;
		}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The ref git's ref walk stopped on: git died (exit 128) saying, in the C
 * locale, "fatal: unable to parse object: REF" (prune) or "fatal: bad
 * object REF" (repack's rev-list). 1 with @p ref, else 0. */
static int stopped_on(int status, const char *err, char *ref, size_t reflen)
{
	static const char *const said[] = {"fatal: unable to parse object: ", "fatal: bad object "};
	size_t k, n;

	if (status != 128)
		return 0;
	for (k = 0; k < sizeof(said) / sizeof(said[0]); k++) {
		const char *at = strstr(err, said[k]);

		if (!at || strncmp(at + strlen(said[k]), "refs/", 5) != 0)
			continue;
		at += strlen(said[k]);
		n = strcspn(at, " \t\r\n");
		if (n == 0 || n >= reflen)
			return 0;
		memcpy(ref, at, n);
		ref[n] = '\0';
		return 1;
	}
	return 0;
}

/* Whether @p ref now reads in the repository at @p dir: 1 absent or at an
 * object the store has (it moved while git read it), 0 still at a missing
 * object (@p oid: damage), or an error code. */
static int ref_reads(const char *dir, const char *ref, char *oid, size_t oidlen, char *err,
                     size_t errlen)
{
	char *show[] = {
	        "git",       "--git-dir", (char *)dir, "for-each-ref", "--format=%(objectname)",
	        (char *)ref, NULL};
	char *has[] = {"git", "--git-dir", (char *)dir, "cat-file", "-e", oid, NULL};
	char out[64];
	int rc;

	oid[0] = '\0';
	if ((rc = run_git(show, oid, oidlen, err, errlen)) != 0)
		return rc < 0 ? rc : LEASE_EINTERNAL;
	oid[strcspn(oid, "\n")] = '\0';
	if (!oid[0])
		return 1; /* deleted meanwhile */
	return run_git(has, out, sizeof(out), err, errlen) == 0;
}

/* The first line of git's standard error, for a message. */
static const char *first_line(char *err)
{
	err[strcspn(err, "\n")] = '\0';
	return err[0] ? err : "no message";
}

int lease_store_maintain(lease_store *st, int64_t grace_s, lease_maintain_report *rep)
{
	char prune[64], err[4096], oid[128], ref[256];
	const char *dir;
	char *args[7];
	int rc, reads;

	lease__store_clear_error(st);
	memset(rep, 0, sizeof(*rep));
	if (grace_s < 0)
		return lease__store_set_error(st, LEASE_EINVALID, "a negative grace");
	if (!(dir = lease__store_local_commondir(st)))
		return 1; /* GitHub and git servers pack and prune their own */
	snprintf(rep->path, sizeof(rep->path), "%s", dir);
	if (grace_s)
		snprintf(prune, sizeof(prune), "--prune=%lld.seconds.ago", (long long)grace_s);
	else
		snprintf(prune, sizeof(prune), "--prune=now");
	args[0] = "git";
	args[1] = "--git-dir";
	args[2] = (char *)dir;
	args[3] = "gc";
	args[4] = "--quiet";
	args[5] = prune;
	args[6] = NULL;
	for (;;) {
		char out[256];

		rep->runs++;
		err[0] = '\0';
		if ((rc = run_git(args, out, sizeof(out), err, sizeof(err))) < 0)
			return lease__store_set_error(st, rc, "%s", err);
		if (rc == 0)
			return 0;
		if (!stopped_on(rc, err, ref, sizeof(ref)))
			return lease__store_set_error(st, LEASE_EINTERNAL,
			                              "git gc %s in %s failed (exit %d): %s", prune,
			                              dir, rc, first_line(err));
		/* git's ref walk is no snapshot: a ref a writer moved while git
		 * read it can show a value already pruned; git stops before it
		 * deletes anything (protocol.md §9) */
		if ((reads = ref_reads(dir, ref, oid, sizeof(oid), err, sizeof(err))) < 0)
			return lease__store_set_error(st, reads, "reading %s again: %s", ref, err);
		if (!reads)
			return lease__store_set_error(st, LEASE_EPAYLOAD,
			                              "%s points at %s, an object the store at %s "
			                              "does not have (git gc stopped on it)",
			                              ref, oid, dir);
		if (rep->runs == LEASE_MAINTAIN_RUNS)
			return lease__store_set_error(
			        st, LEASE_EINTERNAL,
			        "git gc %s in %s stopped %d times on refs that "
			        "moved while it read them (last %s)",
			        prune, dir, rep->runs, ref);
		snprintf(rep->moved[rep->runs - 1], sizeof(rep->moved[0]), "%s", ref);
	}
}
