/**
 * @file commit.h (internal)
 * The one write-and-settle engine (protocol.md §5 "Settling", issue 17):
 * read → plan → write the commit → CAS from the oid read → on a failed,
 * unverified or unanswered CAS read again and settle. Callers (the runtime's
 * operations, reconcile's reap, migrate) supply only their decision through
 * lease_engine_ops; the bounds and the set of failures that are settled by
 * re-reading are the engine's.
 */
#ifndef REFLEASE_COMMIT_H
#define REFLEASE_COMMIT_H

#include "reflease/primitives.h"
#include "reflease/sys/transport.h"
#include "store/frontend.h"

#define LEASE_SETTLE_WALK_MAX    64 /**< parents walked to find a landed write */
#define LEASE_SETTLE_UNKNOWN_MAX 3  /**< unknown outcomes retried (§5) */
#define LEASE_ENGINE_ROUNDS_MAX  12 /**< read-plan-write rounds of one operation */
#define LEASE_ENGINE_WRITES_MAX  32 /**< commits remembered (rounds × rebuilds) */
#define LEASE_ENGINE_REBUILD_MAX 3  /**< stale payloads rebuilt before one CAS (F15) */

/** A commit the operation wrote (in any attempt) and the oid it was based on. */
typedef struct lease_written {
	lease_oid oid;
	int has_base;
	lease_oid base;
	lease_payload p;   /**< the payload it carries */
	int token_changed; /**< the plan's token_changed */
	int has_parent;    /**< the commit's parent: base, or base's parent when it replaced */
	lease_oid parent;
} lease_written;

/** What a plan asks the engine to write. */
typedef struct lease_plan {
	lease_payload p;   /**< validated and built with @p op unless @p message */
	lease_op op;       /**< the summary op */
	char *message;     /**< the whole commit message instead (owned: the engine frees) */
	int token_changed; /**< kept in lease_written */
	int64_t ttl;       /**< > 0: rebuild when built more than ttl/10 s before its CAS */
	int64_t built_at;  /**< store time the payload was built at */
	/** 1: a heartbeat that replaces the tip (protocol.md §2 "Heartbeats replace
	 *  heartbeats"): the commit's parent is @c parent, the tip's own parent,
	 *  not the tip; the CAS is still from the tip's oid as read. */
	int replace;
	lease_oid parent;
} lease_plan;

/** Why the engine gives up (lease_engine_ops.fail). */
typedef enum lease_engine_failure {
	LEASE_FAIL_ERROR = 0, /**< a read, write or CAS error that is not settled */
	LEASE_FAIL_UNKNOWN,   /**< the outcome stayed unknown LEASE_SETTLE_UNKNOWN_MAX times */
	LEASE_FAIL_ROUNDS     /**< LEASE_ENGINE_ROUNDS_MAX rounds: the lease kept changing */
} lease_engine_failure;

typedef struct lease_engine lease_engine;

/** The caller's decisions. plan, landed and fail are required. */
typedef struct lease_engine_ops {
	/**
	 * Decide from @p s (the ref as read) at store time @p now. Return 0 to
	 * write @p pl, 1 when finished without a write (answer recorded,
	 * en->rc set), or an error (recorded by the caller).
	 */
	int (*plan)(lease_engine *en, const lease_ref_state *s, int64_t now, lease_plan *pl);
	/**
	 * en->w[@p idx] landed: @p s is the tip read (or, after a verified CAS, a
	 * state with that commit as tip). Return 1 when finished (en->rc set),
	 * 0 to decide again.
	 */
	int (*landed)(lease_engine *en, const lease_ref_state *s, size_t idx, int64_t now);
	/** Optional: after the write, before its CAS; nonzero ends with that code. */
	int (*before_cas)(lease_engine *en, const lease_ref_state *s, const lease_written *w);
	/**
	 * Optional: the CAS failed with a settleable @p rc. Return 1 to settle by
	 * re-reading, 0 when finished (en->rc set). NULL settles every one.
	 */
	int (*lost)(lease_engine *en, const lease_ref_state *s, int rc);
	/**
	 * Record the final failure @p rc (@p msg, or NULL for the store's last
	 * error); @p s is the last state read (NULL when none). Returns the code
	 * the operation ends with.
	 */
	int (*fail)(lease_engine *en, const lease_ref_state *s, lease_engine_failure why, int rc,
	            const char *msg);
} lease_engine_ops;

/** One operation on one lease. Zero it, then set the first five fields. */
struct lease_engine {
	lease_store *st;
	const char *name;
	const lease_engine_ops *ops;
	void *ctx;                    /**< the caller's */
	int pace;                     /**< lease__store_pace() before each write (bursts) */
	const lease_ref_state *first; /**< the first round's state instead of a read; NULL reads */
	lease_written w[LEASE_ENGINE_WRITES_MAX];
	size_t nw;
	int64_t now; /**< store time of the last read */
	int rc;      /**< the answer, set by the ops when they finish */
};

/**
 * Allocate an engine for one operation on lease @p name (borrowed) with the
 * caller's @p ops and @p ctx; @p first (borrowed, may be NULL) is the state
 * already read, @p pace asks for lease__store_pace() before each write.
 * Free with free(). @return NULL when out of memory.
 */
lease_engine *lease__engine_new(lease_store *st, const char *name, const lease_engine_ops *ops,
                                void *ctx, const lease_ref_state *first, int pace);

/**
 * Run @p en to its end (protocol.md §5): every write is a CAS from the oid
 * read; landed is "the tip is, or descends from, a commit this operation
 * wrote" (first parents, at most LEASE_SETTLE_WALK_MAX, stopping at the
 * oids the writes were based on and at their parents). @return en->rc, or the failure's code.
 */
int lease__engine_run(lease_engine *en);

/** The failures settled by re-reading (§5): lost, unverified or unanswered CAS. */
int lease__engine_settleable(int rc);

/** Index in en->w of the newest write that @p s's tip is or descends from, or -1. */
int lease__engine_landed(lease_engine *en, const lease_ref_state *s);

#endif
