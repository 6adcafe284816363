/**
 * @file testrepo.h
 * Temporary git repositories for tests, and a popen wrapper for the git CLI.
 * Repositories are created under $TMPDIR (else /tmp) and removed by
 * testrepo_remove().
 */
#ifndef REFLEASE_TEST_TESTREPO_H
#define REFLEASE_TEST_TESTREPO_H

#include <stddef.h>

/** Kinds of repository testrepo_make() creates. */
typedef enum testrepo_kind {
	TESTREPO_BARE = 0,      /**< git init --bare, no commits */
	TESTREPO_NONBARE,       /**< git init with one commit on the default branch */
	TESTREPO_EMPTY_NONBARE, /**< git init, no commits */
	TESTREPO_EMPTY_DIR      /**< an empty directory, no repository */
} testrepo_kind;

/**
 * Create a fresh repository in a new temporary directory; its path (the
 * repository itself, or the work tree for non-bare kinds) goes to @p out.
 * @return 0, or -1 (the caller's test should fail)
 */
int testrepo_make(char *out, size_t outlen, testrepo_kind kind);

/** Remove @p path recursively (a directory testrepo_make() returned). */
void testrepo_remove(const char *path);

/**
 * Run `git -C <dir> <args>` through the shell, capturing stdout into @p out
 * (NUL-terminated, truncated to @p outlen; may be NULL). @p args is inserted
 * verbatim: quote it yourself.
 * @return the command's exit status (0 = success), or -1
 */
int testrepo_git(char *out, size_t outlen, const char *dir, const char *args);

/**
 * Run @p cmd with system(3).
 * @return its exit status (0 = success), or -1 when it did not exit normally
 */
int testrepo_sh(const char *cmd);

#endif
