/**
 * @file gitobj.h (internal)
 * libgit2 code shared by the local and remote transports: the process-wide
 * libgit2 set-up, oid conversion, and writing and reading payload commits
 * (protocol.md §2: empty tree, one parent, reflease <reflease@localhost>).
 */
#ifndef REFLEASE_GITOBJ_H
#define REFLEASE_GITOBJ_H

#include <git2.h>

#include "store.h"

/**
 * libgit2's part of lease_global_init() (called once, by it only):
 * git_libgit2_init, fsync of the git directory on (protocol.md §9), no
 * commit cache (each commit is read once per operation), and the network
 * timeouts of lease_git_net_timeouts().
 * @return 0, or LEASE_EINTERNAL
 */
int lease_git_global_setup(void);

/** Copy a lease_oid into a git_oid. */
void lease_git_oid_to(git_oid *g, const lease_oid *o);
/** Copy a git_oid into a lease_oid. */
void lease_git_oid_from(lease_oid *o, const git_oid *g);

/**
 * Write a payload commit into @p repo: the empty tree (written the first
 * time; *@p have_empty_tree remembers it), @p parent or none, author =
 * committer = reflease <reflease@localhost> dated @p when (seconds).
 * @param what  on failure, names the step that failed (static string)
 * @return 0, or a libgit2 error code (negative)
 */
int lease_git_write_commit(lease_oid *out, git_repository *repo, int *have_empty_tree,
                           const lease_oid *parent, const char *message, int64_t when,
                           const char **what);

/**
 * Read object @p oid of @p repo into @p out: its oid, and for a commit its
 * first parent, committer time and raw message (owned by @p out); another
 * object type gives is_commit = 0.
 * @param what  on failure, names the step that failed (static string)
 * @return 0, GIT_ENOTFOUND, or another libgit2 error code (GIT_ERROR when
 *         out of memory)
 */
int lease_git_read_commit(lease_commit *out, git_repository *repo, const lease_oid *oid,
                          const char **what);

#endif
