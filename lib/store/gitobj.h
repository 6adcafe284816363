/**
 * @file gitobj.h (internal)
 * libgit2 code shared by the local and remote transports: the process-wide
 * libgit2 set-up, oid conversion, and writing and reading payload commits
 * (protocol.md §2: empty tree, one parent, reflease <reflease@localhost>).
 */
#ifndef REFLEASE_GITOBJ_H
#define REFLEASE_GITOBJ_H

#include <git2.h>

#include "backend.h"

/**
 * libgit2's part of lease_global_init(), and the one local: and remote:
 * stores need (issue 43): once per process (pthread_once),
 * git_libgit2_init, fsync of the git directory on (protocol.md §9), no
 * commit cache (each commit is read once per operation), and the network
 * bounds of lease__git_net_setup(). Later calls return the first's result.
 * @return 0, or LEASE_EINTERNAL
 */
int lease__git_global_init(void);

/**
 * Bound libgit2's network calls (lib/store/gitstream.c, issue 24 item 3):
 * libgit2 >= 1.7 through its server timeouts; 1.5 through reflease's own
 * standard socket stream (git_stream_register), whose connect, read and write
 * end by lease__git_set_deadline()'s deadline. Process-wide (libgit2's
 * registry): every libgit2 user of the process gets the bounded stream.
 * @return 0, or libgit2's negative error code
 */
int lease__git_net_setup(void);

/**
 * The calling thread's next libgit2 network calls end by @p mono_ms
 * (lease__mono_ms() clock; 0 = only the per-call bounds of git2compat.h,
 * LEASE_GIT_CONNECT_TIMEOUT_MS and LEASE_GIT_IO_TIMEOUT_MS). A call past it
 * fails with a "timed out" libgit2 error.
 */
void lease__git_set_deadline(int64_t mono_ms);

/** Copy a lease_oid into a git_oid. */
/**
 * libgit2's last message for a message of ours: ": <message>" (@p sep) and
 * the message, or "" and "" when libgit2 has none. Borrowed (libgit2's
 * thread-local error), valid until the next libgit2 call. Used as
 * lease__error_set(err, n, "what%s%s", lease__git_sep(), lease__git_msg()).
 */
const char *lease__git_sep(void);
/** libgit2's last message, or "" (see lease__git_sep()). */
const char *lease__git_msg(void);

void lease__git_oid_to(git_oid *g, const lease_oid *o);
/** Copy a git_oid into a lease_oid. */
void lease__git_oid_from(lease_oid *o, const git_oid *g);

/**
 * Write a payload commit into @p repo: the empty tree (written the first
 * time; *@p have_empty_tree remembers it), @p parent or none, author =
 * committer = reflease <reflease@localhost> dated @p when (seconds).
 * @param what  on failure, names the step that failed (static string)
 * @return 0, or a libgit2 error code (negative)
 */
int lease__git_write_commit(lease_oid *out, git_repository *repo, int *have_empty_tree,
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
int lease__git_read_commit(lease_commit *out, git_repository *repo, const lease_oid *oid,
                           const char **what);

#endif
