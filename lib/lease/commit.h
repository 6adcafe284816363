/**
 * @file commit.h (internal)
 * The one write-and-settle engine (protocol.md §5 "Settling", issue 17):
 * read → plan → write the commit (or delete the ref) → CAS from the oid read
 * → on a failed, unverified or unanswered CAS read again and settle. Callers
 * (the runtime's operations, sets — N member writes, one atomic CAS —,
 * fair waiters' queue tickets, reconcile's reap and prune, migrate) supply only
 * their decisions, through three callbacks that each answer with a typed
 * step (lease_step); the bounds and the set of failures that are settled by
 * re-reading are the engine's, and so is the answer to a store that refuses
 * a write while nothing moves (sent again as it is, with growing pauses,
 * within --timeout; issue 38). The engine itself is opaque (commit.c).
 */
#ifndef REFLEASE_COMMIT_H
#define REFLEASE_COMMIT_H

#include "reflease/primitives.h"
#include "reflease/sys/transport.h"
#include "store/frontend.h"

#define LEASE_SETTLE_WALK_MAX    64 /**< parents walked to find a landed write */
#define LEASE_SETTLE_UNKNOWN_MAX 3  /**< unknown outcomes retried (§5) */
#define LEASE_ENGINE_ROUNDS_MAX  12 /**< read-plan-write rounds of one operation */
#define LEASE_ENGINE_WRITES_MAX  32 /**< writes remembered (rounds × rebuilds) */
#define LEASE_ENGINE_REBUILD_MAX 3  /**< stale payloads rebuilt before one CAS (F15) */
#define LEASE_ENGINE_BACKOFF_MS                                                                    \
	1000 /**< first pause before a refused write is sent again;                                \
	          doubled each time, within --timeout (§5) */

/** A write the operation sent (in any attempt) and the oid it was based on. */
typedef struct lease_written {
	int deleted;       /**< 1: a delete of the ref from @c base (no commit, @c oid zero) */
	lease_oid oid;     /**< the commit written */
	int has_base;      /**< the ref was present when read */
	lease_oid base;    /**< ... at this oid: the CAS was from it */
	lease_payload p;   /**< the payload the commit carries */
	int token_changed; /**< the plan's token_changed */
	int has_parent;    /**< the commit's parent: base, or base's parent when it replaced */
	lease_oid parent;
	int skipped; /**< a set's member this write left alone (lease_plan.skip) */
	int shown;   /**< a set's member whose read shows this write (set when settling) */
} lease_written;

/** What a plan asks the engine to write (LEASE_STEP_WRITE). */
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
	int skip; /**< a set's member not written by this write (lease__engine_run_set()) */
} lease_plan;

/** What a callback asks the engine to do next. */
typedef enum lease_step_kind {
	LEASE_STEP_WRITE = 0, /**< plan: write the lease_plan's commit, CAS it from the oid read */
	LEASE_STEP_DELETE,    /**< plan: delete the ref by CAS from the oid read (present) */
	LEASE_STEP_DONE,      /**< any: the operation ends; its answer is lease_step.code */
	LEASE_STEP_DECIDE,    /**< landed: not finished, decide again (plan) — on the state
	                           read, or after a verified CAS on a fresh read */
	LEASE_STEP_SETTLE     /**< failed with LEASE_FAIL_LOST: read again and settle (§5) */
} lease_step_kind;

/** A callback's answer: the step, and for LEASE_STEP_DONE the operation's code. */
typedef struct lease_step {
	lease_step_kind kind;
	int code; /**< LEASE_STEP_DONE: 0 or a negative LEASE_E* code */
} lease_step;

/** A step of @p kind (with @p code for LEASE_STEP_DONE). */
static inline lease_step lease_step_of(lease_step_kind kind, int code)
{
	lease_step s = {kind, code};
	return s;
}

/* The steps by name: write the plan, delete the ref read (from plan);
 * finished with @p code (any); decide again (landed); settle by re-reading
 * (failed, LEASE_FAIL_LOST only). */
#define lease_step_write()    lease_step_of(LEASE_STEP_WRITE, 0)
#define lease_step_delete()   lease_step_of(LEASE_STEP_DELETE, 0)
#define lease_step_done(code) lease_step_of(LEASE_STEP_DONE, (code))
#define lease_step_decide()   lease_step_of(LEASE_STEP_DECIDE, 0)
#define lease_step_settle()   lease_step_of(LEASE_STEP_SETTLE, 0)

/** Why a write or read failed (lease_engine_ops.failed). */
typedef enum lease_engine_failure {
	LEASE_FAIL_LOST = 0, /**< a settleable failure of a write (lease__engine_settleable()):
	                          lost, unverified or unanswered; SETTLE or DONE */
	LEASE_FAIL_ERROR,    /**< a read, write or CAS error that is not settled: DONE */
	LEASE_FAIL_UNKNOWN,  /**< the outcome stayed unknown LEASE_SETTLE_UNKNOWN_MAX times */
	LEASE_FAIL_ROUNDS,   /**< LEASE_ENGINE_ROUNDS_MAX rounds: the lease kept changing */
	LEASE_FAIL_REFUSED,  /**< the store refused the write (LEASE_ECAS, outcome known) while
	                          the re-reads showed nothing moved, sent again with growing
	                          pauses until --timeout: nothing changed; @p msg quotes the
	                          store's message */
	LEASE_FAIL_PARTIAL   /**< a set write shows on some of its members only (the store did
	                          not apply it atomically): lease_round.w[i].shown names them */
} lease_engine_failure;

/** What a callback is told: the operation and where it stands. */
typedef struct lease_round {
	lease_store *st;
	const char *name;         /**< the lease */
	const lease_ref_state *s; /**< the ref as read (after a verified CAS: the state it
	                               made); NULL in failed() when no read succeeded */
	int64_t now;              /**< store time of this decision: the read's, or after a
	                               verified CAS a fresh reading */
	int64_t read_at;          /**< store time of the last read */
	size_t writes;            /**< writes sent so far by this operation (commits, deletes) */
	size_t n;                 /**< members: 1, or a set's count (then @c s points to n
	                               states, one per name, in the names' order) */
	const lease_written *w;   /**< a set: its last write, n entries (NULL before one) */
	int member;               /**< a set: the member a read or commit write failed on,
	                               else -1 */
} lease_round;

/** The caller's decisions; all three are required. @p ctx is the caller's. */
typedef struct lease_engine_ops {
	/**
	 * Decide from r->s: LEASE_STEP_WRITE with @p pl filled, LEASE_STEP_DELETE,
	 * or LEASE_STEP_DONE with the answer (0, or an error the callee recorded).
	 */
	lease_step (*plan)(void *ctx, const lease_round *r, lease_plan *pl);
	/* (a set: @p pl points to r->n plans, one per member) */
	/**
	 * @p w landed: r->s's tip is, or descends from, its commit (a delete:
	 * the ref is gone). LEASE_STEP_DONE, or LEASE_STEP_DECIDE to plan again.
	 * (A set: @p w points to r->n entries, every written one shown.)
	 */
	lease_step (*landed)(void *ctx, const lease_round *r, const lease_written *w);
	/**
	 * A write failed with @p rc (@p msg, or NULL for the store's last
	 * error). For LEASE_FAIL_LOST: LEASE_STEP_SETTLE, or LEASE_STEP_DONE to
	 * stop; for the others LEASE_STEP_DONE with the code the operation ends
	 * with, after recording the failure (any other step counts as DONE @p rc).
	 */
	lease_step (*failed)(void *ctx, const lease_round *r, lease_engine_failure why, int rc,
	                     const char *msg);
} lease_engine_ops;

/**
 * Run one operation on lease @p name (borrowed) to its end (protocol.md §5)
 * with the caller's @p ops and @p ctx: every write is a CAS from the oid
 * read; landed is "the tip is, or descends from, a commit this operation
 * wrote" (first parents, at most LEASE_SETTLE_WALK_MAX, stopping at the oids
 * the writes were based on and at their parents), or for a delete "the ref
 * is gone". @p first (borrowed, may be NULL) is the state already read, used
 * instead of the first read; @p pace asks for lease__store_pace() before each
 * write (one operation of a burst). A write the store refuses (LEASE_ECAS,
 * outcome known) while the re-read shows the ref as the write expected it
 * is sent again as it is — the commit already written, never a new one —
 * after LEASE_ENGINE_BACKOFF_MS, then twice as long each time, while
 * --timeout (counted from the first refusal) allows; then failed()
 * LEASE_FAIL_REFUSED: nothing changed (protocol.md §5 "Settling").
 * @return the code of the step that ended it (LEASE_STEP_DONE), or
 *         LEASE_ENOMEM (failed() told)
 */
int lease__engine_run(lease_store *st, const char *name, const lease_engine_ops *ops, void *ctx,
                      const lease_ref_state *first, int pace);

/**
 * Run one operation on the full ref @p refname (borrowed) under
 * refs/<ns>-queue/ — a fair waiter's ticket (protocol.md §5 "Fair
 * waiting"; queue.c) — with every rule of lease__engine_run(): the same
 * settling, unknown-outcome bound, refusal backoff and post-state checks.
 * The plan writes a whole commit message (lease_plan.message; the payload
 * is not a lease's), or deletes the ref; the reads are
 * lease__fetch_refname()'s (r->s->payload_rc is set: a ticket is no lease
 * payload). @return as lease__engine_run()
 */
int lease__engine_run_ref(lease_store *st, const char *refname, const lease_engine_ops *ops,
                          void *ctx, const lease_ref_state *first);

/**
 * Run one operation on the set @p names[0..n-1] (borrowed, 1 to
 * LEASE_SET_MAX distinct leases; protocol.md "Sets") with the same rules as
 * lease__engine_run(): the round reads every member in one read
 * (lease_fetch_refs()), plan() fills @p pl[0..n-1] (a member with
 * lease_plan.skip is not written; LEASE_STEP_DELETE is not a set's step),
 * the engine writes one commit per written member and moves them all in one
 * atomic write (lease_cas_set()); landed() gets the write's n entries once
 * every written member shows it (its tip is, or descends from, the member's
 * commit); a write shown on some members only ends with failed()
 * LEASE_FAIL_PARTIAL. The store must be able to write a set
 * (lease_store_can_write_set(): the caller checks).
 * @return as lease__engine_run()
 */
int lease__engine_run_set(lease_store *st, const char *const *names, size_t n,
                          const lease_engine_ops *ops, void *ctx);

/** The failures settled by re-reading (§5): lost, unverified or unanswered CAS. */
int lease__engine_settleable(int rc);

#endif
