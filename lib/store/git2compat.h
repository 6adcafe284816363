/**
 * @file git2compat.h (internal)
 * The differences between the libgit2 releases reflease builds against, in one
 * place, decided by libgit2's own LIBGIT2_VER_* macros (git2/version.h):
 *
 * - 1.5 (Debian 12), 1.7 (Ubuntu 24.04), 1.8 (Debian 12 backports), 1.9
 *   (Debian 13).
 * - From 1.8 on, git_error_clear() and git_error_set_str() are declared in
 *   git2/sys/errors.h, no longer through git2.h.
 * - From 1.7 on, network operations can be bounded (GIT_OPT_SET_SERVER_TIMEOUT,
 *   GIT_OPT_SET_SERVER_CONNECT_TIMEOUT); on 1.5 a server that accepts the
 *   connection and then never answers blocks the call (protocol.md §9
 *   "remote").
 */
#ifndef REFLEASE_GIT2COMPAT_H
#define REFLEASE_GIT2COMPAT_H

#include <git2.h>

#if LIBGIT2_VER_MAJOR > 1 || (LIBGIT2_VER_MAJOR == 1 && LIBGIT2_VER_MINOR >= 8)
#include <git2/sys/errors.h>
#endif

#if LIBGIT2_VER_MAJOR > 1 || (LIBGIT2_VER_MAJOR == 1 && LIBGIT2_VER_MINOR >= 7)
/** 1 when this libgit2 bounds network operations in time, else 0. */
#define LEASE_GIT_NET_TIMEOUTS 1
#else
#define LEASE_GIT_NET_TIMEOUTS 0
#endif

/** The remote backend's bound on establishing a connection, milliseconds. */
#define LEASE_GIT_CONNECT_TIMEOUT_MS 10000
/** The remote backend's bound on one network read or write, milliseconds. */
#define LEASE_GIT_IO_TIMEOUT_MS 30000

/**
 * Bound every later libgit2 network operation of this process (they are
 * libgit2's global options): a connection within LEASE_GIT_CONNECT_TIMEOUT_MS,
 * each read or write within LEASE_GIT_IO_TIMEOUT_MS; an operation past either
 * fails (the remote backend reports LEASE_ENET). No effect before libgit2 1.7.
 * Call after git_libgit2_init().
 * @return 0, or libgit2's negative error code
 */
static inline int lease_git_net_timeouts(void)
{
#if LEASE_GIT_NET_TIMEOUTS
	if (git_libgit2_opts(GIT_OPT_SET_SERVER_CONNECT_TIMEOUT, LEASE_GIT_CONNECT_TIMEOUT_MS) < 0)
		return -1;
	return git_libgit2_opts(GIT_OPT_SET_SERVER_TIMEOUT, LEASE_GIT_IO_TIMEOUT_MS);
#else
	return 0;
#endif
}

#endif
