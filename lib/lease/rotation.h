/**
 * @file rotation.h (internal)
 * The owner-keyed rotation matrix (protocol.md §5): the relation of a writer
 * to the current state of a lease and the one lookup table that turns it into
 * a token change (mint / preserve / rotate). Admission (who may write at all)
 * is the operation table's business (runtime.c); this module only decides how
 * the token changes once a write is admitted.
 */
#ifndef REFLEASE_ROTATION_H
#define REFLEASE_ROTATION_H

#include "reflease/common.h"
#include "reflease/schema.h"

/** Relation of a writer (owner, host) to the lease's current state (protocol.md §5). */
typedef enum lease_relation {
	LEASE_REL_FRESH = 0, /**< ref absent, or current phase `released` */
	LEASE_REL_SAME,      /**< same owner, same host */
	LEASE_REL_MOVED,     /**< same owner, different host (cross-host) */
	LEASE_REL_OTHER      /**< different owner */
} lease_relation;

/** How an admitted write changes the fencing token (protocol.md §5). */
typedef enum lease_token_change {
	LEASE_TOKEN_MINT = 0, /**< new token on a fresh lease; transitions + 1 (or the base) */
	LEASE_TOKEN_PRESERVE, /**< keep owner, host, token, transitions and acquired_at */
	LEASE_TOKEN_ROTATE /**< new token, writer's identity, transitions + 1, acquired_at = now */
} lease_token_change;

/** "fresh", "same", "moved", "other". */
const char *lease__relation_name(lease_relation rel);
/** "mint", "preserve", "rotate". */
const char *lease__token_change_name(lease_token_change ch);

/**
 * Relation of (@p owner, @p host) to @p cur (protocol.md §5). @p cur NULL
 * means the ref is absent. A `released` payload is fresh whoever wrote it.
 */
lease_relation lease__relation_of(const lease_payload *cur, const char *owner, const char *host);

/**
 * The token rule: the whole matrix as one lookup keyed by relation and by
 * whether the writer presents the current token (protocol.md §5):
 *
 * | relation | presents current token T | no token (acquire) |
 * |----------|--------------------------|--------------------|
 * | fresh    | mint                     | mint               |
 * | same     | preserve                 | rotate (takeover)  |
 * | moved    | rotate (handoff)         | rotate (takeover)  |
 * | other    | rotate (handoff)         | rotate (takeover)  |
 *
 * Phase never enters the lookup. Whether the write is admitted at all (live,
 * expired, token current) is decided by the caller before this is consulted.
 */
lease_token_change lease__token_rule(lease_relation rel, int presents_current_token);

/**
 * Apply @p ch to the identity fields of @p next: owner, host, lease_token,
 * transitions and acquired_at. Preserve copies them from @p cur; mint and
 * rotate set the writer's identity, a fresh 128-bit token from @p rnd,
 * acquired_at = @p now and transitions = cur->transitions + 1 (mint on an
 * absent ref: @p base_transitions, i.e. 0 or 1 + the highest archived value).
 * Other fields of @p next are left alone.
 * @return 0, LEASE_EINVALID (preserve without @p cur), or the randomness error
 */
int lease__rotation_apply(lease_payload *next, const lease_payload *cur, lease_token_change ch,
                          const char *owner, const char *host, int64_t now,
                          int64_t base_transitions, const lease_random *rnd);

#endif
