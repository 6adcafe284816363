/**
 * @file object.h
 * A commit object as a store hands it over: what the primitives read
 * (reflease/primitives.h) and what a transport fills
 * (reflease/sys/transport.h). Below both, so that the transport interface
 * does not include the primitives above it (issue 26 item 1).
 */
#ifndef REFLEASE_OBJECT_H
#define REFLEASE_OBJECT_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A commit object as read from the store. */
typedef struct lease_commit {
	lease_oid oid;
	int is_commit; /**< 0: the object exists but is not a commit (blob, tree, tag) */
	int has_parent;
	lease_oid parent; /**< first parent, when has_parent */
	int64_t time;     /**< committer time, seconds since the epoch */
	char *message;    /**< full message, owned (lease_commit_clear()) */
	/** Unreadable tips (protocol.md §7): the ref's object is absent from the
	 *  store (oid = the ref's target; is_commit 0). */
	int missing;
	/** The ref is a symbolic ref (local stores): oid = what it resolves to
	 *  (all-zero when dangling), message = the name it points at. */
	int symbolic;
	/** The ref's own file cannot be read as a ref (local stores, protocol.md
	 *  §7 "unreadable-ref"): LEASE_EPAYLOAD when it is empty or garbled (a
	 *  crashed writer's residue), LEASE_EAUTH when this user may not read it;
	 *  0 otherwise. oid = what the file is observed at (§9), is_commit 0,
	 *  message = the cause naming the file. */
	int unreadable;
} lease_commit;

/** Free what @p c owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_commit_clear(lease_commit *c);
/** Deep copy @p src into @p dst (dst's old contents are not freed). 0 or LEASE_ENOMEM. */
REFLEASE_EXTERN int lease_commit_copy(lease_commit *dst, const lease_commit *src);

#ifdef __cplusplus
}
#endif
#endif
