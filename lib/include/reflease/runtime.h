/**
 * @file runtime.h
 * Lease operations (protocol.md §5, §6): acquire, heartbeat, transition,
 * reacquire, release, break and status, each a read-decide-CAS loop over the
 * primitives that settles failed or unanswered writes, with the fencing token
 * changed by the owner-keyed rotation matrix.
 */
#ifndef REFLEASE_RUNTIME_H
#define REFLEASE_RUNTIME_H

#include "common.h"
#include "primitives.h"
#include "schema.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** lease_result.status as a value (cli.md statuses); lease_status_name() spells it. */
typedef enum lease_status_id {
	LEASE_STATUS_ERROR = 0,
	LEASE_STATUS_ACQUIRED,
	LEASE_STATUS_ALREADY_HELD,
	LEASE_STATUS_REACQUIRED,
	LEASE_STATUS_RENEWED,
	LEASE_STATUS_NOT_DUE,
	LEASE_STATUS_TRANSITIONED,
	LEASE_STATUS_RELEASED,
	LEASE_STATUS_ALREADY_RELEASED,
	LEASE_STATUS_NOT_OWNER,
	LEASE_STATUS_BROKEN,
	LEASE_STATUS_HELD,
	LEASE_STATUS_NOT_HOLDER,
	LEASE_STATUS_EXPIRED,
	LEASE_STATUS_LIVE,
	LEASE_STATUS_ABSENT,
	LEASE_STATUS__COUNT
} lease_status_id;

/**
 * Outcome of one lease operation: what the caller sees, for human or JSON
 * output (cli.md "JSON output"). Owns no heap memory.
 */
typedef struct lease_result {
	/** The outcome (cli.md statuses: acquired, already_held, reacquired,
	 *  renewed, not_due, transitioned, released, already_released,
	 *  not_owner, broken, held, not_holder, expired, live, absent, error);
	 *  lease_status_name() spells it. LEASE_STATUS_ERROR (0) in a zeroed
	 *  result and whenever @p code is an error no other status explains. */
	lease_status_id status;
	int code; /**< the operation's return code */
	char name[LEASE_NAME_MAX + 1];
	char ref[LEASE_NAME_MAX + LEASE_NS_MAX + 8];
	int present;           /**< the ref exists (after the operation) */
	lease_oid oid;         /**< the ref's oid (after the operation) */
	int has_payload;       /**< payload below is valid */
	lease_payload payload; /**< the lease state reported */
	int holds_token;       /**< the caller holds payload.lease_token (show it) */
	int token_rotated;     /**< this operation minted or rotated the token */
	int approximate_ttl;   /**< a pre-bump payload's TTL was assumed (§6) */
	int64_t now;           /**< store time when the result was decided, s */
	/** Human detail for errors and non-success. On an error: the call's
	 *  first (deepest) error, as lease_store_last_error() says it, else the
	 *  code's lease_error_id(); never empty then. Ends in "..." when cut. */
	char message[512];
	/** The tip's first parent (after the operation), when known: pass it
	 *  back as lease_op_options.known_parent with this oid and payload. */
	int has_parent;
	lease_oid parent;
	/** acquire --fair: store time from the waiter's first ticket to the
	 *  acquire, s; -1 when the call took no ticket */
	int64_t waited_seconds;
} lease_result;

/**
 * The cli.md name of @p id ("acquired", …): the one table of status names.
 * @return a static string, never NULL; "error" for a value outside the enum
 */
REFLEASE_EXTERN const char *lease_status_name(lease_status_id id);

#define LEASE_OP_OPTIONS_VERSION 2

/**
 * What a waiting acquire reports (lease_op_options.progress_cb; protocol.md
 * §5 "Waiting", issue 38): called when the wait begins and about once a
 * minute after, for every kind of wait (plain, set, slots, fair). The
 * strings are borrowed for the call.
 */
typedef struct lease_wait_progress {
	/** the lease in the way: the lease, a set's held member, the slot whose
	 *  holder expires first, or the lease a fair waiter queues for */
	const char *name;
	const char *owner;      /**< its holder's owner; "" when unknown */
	const char *host;       /**< its holder's host; "" when unknown */
	int64_t until;          /**< the holder's expires_at, s since the epoch; 0 = unknown */
	int64_t queue_position; /**< fair waits: this waiter's place (1 = next); else 0 */
	double waited_seconds;  /**< how long the wait has lasted, s (monotonic) */
} lease_wait_progress;

/** Seconds between two progress reports of one wait (lease_wait_progress). */
#define LEASE_WAIT_REPORT_S 60

/**
 * Options shared by the lease operations. Initialise with
 * LEASE_OP_OPTIONS_INIT; unused fields are ignored by an operation. The
 * strings are borrowed for the call; they may point into the lease_result
 * the call writes (e.g. out->payload.lease_token of an earlier call): an
 * operation copies them before it resets its result.
 */
typedef struct lease_op_options {
	unsigned int version;
	const char *owner;   /**< identity (§5); required for writes */
	const char *host;    /**< identity (§5); required for writes */
	int64_t ttl_seconds; /**< 0 = default (§6: stored ttl when preserving, else 300) */
	lease_phase phase;   /**< acquire: initial phase (NONE = claimed) */
	lease_phase to;      /**< transition: target phase */
	const char *
	        lease_token; /**< the token presented (heartbeat, transition, reacquire, release) */
	int64_t wait_seconds; /**< acquire: wait up to this long on held/already_held */
	int force;            /**< break: also over a live lease */
	/** acquire --wait: called before each wait with the most seconds it will
	 *  last, and again with 0 when a change ended it earlier (the wait is over:
	 *  a write may follow); return non-zero to stop waiting (interrupted).
	 *  May be NULL. */
	int (*wait_cb)(double sleep_seconds, void *payload);
	void *wait_payload;
	/**
	 * heartbeat only: the state this caller last wrote and verified (its oid
	 * and payload). The first round then skips the read and does its CAS
	 * from that oid; a stale state fails the CAS and is settled by reading
	 * again (§5), so this is never less safe — only cheaper (3 GitHub
	 * requests instead of 4 for each heartbeat of the service, issue 6).
	 * Both NULL = read first. Borrowed for the call.
	 */
	const lease_oid *known_oid;
	const lease_payload *known_payload;
	/**
	 * heartbeat only, with known_oid: that commit's first parent
	 * (lease_result.parent), so that a heartbeat over a heartbeat of the same
	 * tenure replaces it without a read (protocol.md §2 "Heartbeats replace
	 * heartbeats"). NULL = unknown: the heartbeat is appended. Borrowed.
	 */
	const lease_oid *known_parent;
	/**
	 * acquire --wait --fair (protocol.md §5 "Fair waiting", issue 28): take
	 * a ticket in the lease's queue, keep it alive (its TTL is the lease's
	 * TTL), and take the lease only when it is free and no older live ticket
	 * exists; the ticket is removed on success, when the wait runs out, when
	 * wait_cb stops it, and on any error. lease_acquire only:
	 * lease_acquire_set and lease_slots_acquire wait unordered and ignore it
	 * (the CLI refuses --fair with a set or --slots, exit 64).
	 */
	int fair;
	/**
	 * acquire --wait (version 2, issue 38): called when the wait begins and
	 * every LEASE_WAIT_REPORT_S s after with who is in the way (the CLI
	 * prints it on stderr). May be NULL. It must not call the library on
	 * the same store.
	 */
	void (*progress_cb)(const lease_wait_progress *p, void *payload);
	void *progress_payload; /**< passed to progress_cb */
} lease_op_options;

#define LEASE_OP_OPTIONS_INIT                                                                      \
	{                                                                                          \
		LEASE_OP_OPTIONS_VERSION, NULL, NULL, 0, LEASE_PHASE_NONE, LEASE_PHASE_NONE, NULL, \
		        0, 0, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL                          \
	}

/**
 * Take a free or expired lease (protocol.md §5 "acquire"): mint on fresh
 * (absent: transitions 0, or 1 + the highest archived value; released:
 * transitions + 1), rotate on takeover of an expired lease (one CAS replace,
 * never delete-then-create). Never admits a caller to a live lease, not even
 * its own identity ("already_held"; re-entry is reacquire with the token).
 * Starts in opts->phase (NONE = claimed). With wait_seconds > 0, retries
 * held/already_held (and a ref lock held past the store's lock wait,
 * LEASE_ELOCKED, looked at again every ttl_min/20 s) each time the ref may
 * have changed or the holder's expiry instant comes (lease_wait_ref_change(),
 * protocol.md §5 "Waiting"; a store that cannot watch is polled every
 * ttl_min/20 s; never a growing backoff), until wait_seconds have passed on
 * the monotonic clock, or on the store clock less its 1 s rounding when that
 * runs faster (never sooner), calling wait_cb before each wait (and with 0
 * when the wait ended early); success only for a verified write made by this
 * call with at least half the TTL left (F15, F22). The wait's answer is read
 * from the store after its budget is spent (an expired lease is taken then;
 * a ref lock met then, with the lease live under another, is LEASE_EHELD
 * "held by …"), and where store time is this machine's clock a single wait
 * lasts at most 2 s, so a forward wall-clock step is seen at once (protocol.md
 * §5 "One wait loop", issue 40 B68/B69).
 * @return 0 ("acquired"), LEASE_EHELD ("held" / "already_held", also when the
 *         wait ran out or wait_cb stopped it), LEASE_EINVALID, LEASE_EVERSION,
 *         LEASE_EPAYLOAD (unreadable payload), LEASE_EUNVERIFIED / LEASE_ENET
 *         (outcome unknown after 3 retries), LEASE_ECAS (the lease kept
 *         changing). With opts->fair, out->waited_seconds is the store time
 *         since the waiter's first ticket (set on success).
 */
REFLEASE_EXTERN int lease_acquire(lease_result *out, lease_store *st, const char *name,
                                  const lease_op_options *opts);

/**
 * Extend the lease held with opts->lease_token (protocol.md §5, §6):
 * expires_at = now + ttl, ttl_seconds = ttl (opts->ttl_seconds, else, when
 * the token is preserved, the stored ttl_seconds — 300 for a pre-bump
 * payload, raised to the store minimum; else 300, protocol.md §6).
 * Preserves the token for the same identity; rotates on a
 * cross-host or other-owner handoff (a live handoff: see §5 on overlap).
 * The floor (§6), after the token checks and only for the same identity:
 * when now − heartbeat time < max(1, ttl_seconds/10) and at least half the
 * TTL is left, nothing is written and the answer is "not_due" (success,
 * holds_token set); for a pre-bump payload the heartbeat time is
 * approximated and out->approximate_ttl is set. Over a heartbeat of the same
 * tenure, phase and TTL the new heartbeat replaces it (protocol.md §2: its
 * parent is the tip's parent, payload.heartbeats counts the run,
 * payload.previous_heartbeat_at names the replaced one's time); still one
 * CAS from the tip read.
 * @return 0 ("renewed", "not_due"), LEASE_ENOTHOLDER ("not_holder"),
 *         LEASE_EEXPIRED ("expired": reacquire), LEASE_EINVALID,
 *         LEASE_EVERSION, LEASE_EUNVERIFIED / LEASE_ENET, LEASE_ECAS
 */
REFLEASE_EXTERN int lease_heartbeat(lease_result *out, lease_store *st, const char *name,
                                    const lease_op_options *opts);

/**
 * Move the held lease to opts->to (protocol.md §5): claimed, working or
 * review, any to any other (the current phase again is LEASE_EINVALID).
 * Admitted only with the current token on a live lease; an expired one
 * answers "expired" (reacquire first).
 *
 * Token rule — the owner-keyed rotation matrix (lib/lease/rotation.c), by the
 * writer's relation to the current state, never by phase:
 *
 * | relation (writer vs payload)     | token      | transitions |
 * |----------------------------------|------------|-------------|
 * | same (owner and host equal)      | preserve   | kept        |
 * | moved (same owner, other host)   | rotate     | + 1         |
 * | other (another owner)            | rotate     | + 1         |
 *
 * A rotating write records the writer's owner/host and acquired_at = now.
 * Divergence from the earlier phase-keyed rule ("rotate on entry into
 * claimed/working; reacquire always rotates"): a same-identity transition
 * into claimed or working used to rotate and now preserves; a cross-host or
 * other-owner transition into review used to preserve and now rotates.
 * expires_at = now + ttl (opts->ttl_seconds, else the stored ttl_seconds
 * when preserving, else 300: a rotating transition grants the default,
 * protocol.md §6).
 * @return 0 ("transitioned"), LEASE_ENOTHOLDER ("not_holder"), LEASE_EEXPIRED
 *         ("expired"), LEASE_EINVALID, LEASE_EVERSION (newer payload),
 *         LEASE_EUNVERIFIED / LEASE_ENET (outcome unknown after 3 retries),
 *         LEASE_ECAS
 */
REFLEASE_EXTERN int lease_transition(lease_result *out, lease_store *st, const char *name,
                                     const lease_op_options *opts);

/**
 * Take back a lease this token still holds, live or expired (protocol.md §5),
 * e.g. after `heartbeat` answered "expired" (F14). Nobody took over as long
 * as the token is current, so nothing is undone; the phase is kept.
 *
 * Token rule — the owner-keyed rotation matrix (lib/lease/rotation.c):
 * same identity (owner and host) preserves token, transitions and
 * acquired_at; moved (same owner, other host) and other (another owner)
 * rotate: new token, transitions + 1, acquired_at = now, the writer's
 * identity. Divergence from the earlier phase-keyed rule, under which
 * reacquire always rotated: a same-host reacquire now preserves the token
 * (a guarded process holding it keeps working); a cross-host one still
 * rotates. expires_at = now + ttl (opts->ttl_seconds, else the stored
 * ttl_seconds when preserving, else 300).
 * @return 0 ("reacquired"), LEASE_ENOTHOLDER ("not_holder": token not
 *         current, lease released or absent), LEASE_EINVALID, LEASE_EVERSION,
 *         LEASE_EUNVERIFIED / LEASE_ENET, LEASE_ECAS
 */
REFLEASE_EXTERN int lease_reacquire(lease_result *out, lease_store *st, const char *name,
                                    const lease_op_options *opts);

/**
 * Give the lease up (protocol.md §5): with the current token (live or
 * expired) writes `released` keeping token and transitions, expires_at = now,
 * ttl_seconds 0, owner/host = the releaser's. Absent or released:
 * "already_released"; a token that is not current, empty or NULL:
 * "not_owner" — nothing written in either case (F04, F05, F09).
 * @return 0 ("released", "already_released", "not_owner" — see out->status),
 *         LEASE_EINVALID, LEASE_EVERSION, transport errors
 */
REFLEASE_EXTERN int lease_release(lease_result *out, lease_store *st, const char *name,
                                  const lease_op_options *opts);

/**
 * Administrators: write `released` whatever the token or payload version
 * (protocol.md §5 "break"), by CAS on the oid read; over a live lease only
 * with opts->force ("held" otherwise). A readable payload keeps its token and
 * transitions; over an unreadable one (F27) the payload is parsed leniently
 * (a visible future expires_at counts as live), a token is minted and
 * transitions = 1 + the highest readable in the last 64 commits of the chain
 * (0 if none). owner/host are the breaker's (opts->owner/host required).
 * @return 0 ("broken", "already_released"), LEASE_EHELD, LEASE_EINVALID,
 *         transport errors
 */
REFLEASE_EXTERN int lease_break(lease_result *out, lease_store *st, const char *name,
                                const lease_op_options *opts);

/**
 * Read the lease: status "live", "expired" (now > expires_at + skew margin),
 * "released" or "absent" (cli.md "status NAME"). The token is never shown.
 * @return 0, LEASE_EPAYLOAD / LEASE_EVERSION (unreadable payload; out->message
 *         says why), LEASE_EINVALID, transport errors
 */
REFLEASE_EXTERN int lease_status(lease_result *out, lease_store *st, const char *name);

/**
 * Whether @p p, a lease's payload as read, is a member of a set write that a
 * crash cut between its renames (protocol.md "Sets", "A set cut by a crash";
 * issue 40 B65): it is live, names a set, and some mate is still at the oid
 * that write moved it from. Such a member is held by no one. Reads the mates
 * in one batched read; none on a store that writes sets atomically (github:)
 * or when @p p names no set.
 * @param mate  out: the first mate the write did not reach (NUL-terminated,
 *              up to @p matelen bytes; "" when not cut); may be NULL
 * @return 1 (cut), 0 (not cut), LEASE_ENOMEM or a read error (< 0)
 */
REFLEASE_EXTERN int lease_set_cut_mate(char *mate, size_t matelen, lease_store *st,
                                       const lease_payload *p);

/* ---- Sets: several leases in one atomic write (protocol.md "Sets") ---- */

/**
 * Outcome of one set operation: the set's answer and each member's, in the
 * order the names were given (cli.md "Sets"). Owns no heap memory (about
 * 16 lease_results: allocate it, do not put it on a small stack).
 */
typedef struct lease_set_result {
	/** The set's status: the operation's success status when every member
	 *  was written (or answered without a write: not_due, already_released),
	 *  else the status of the member that stopped it (@p blocker), or
	 *  LEASE_STATUS_ERROR; lease_status_name() spells it. */
	lease_status_id status;
	int code;          /**< the operation's return code */
	int blocker;       /**< index of the member that stopped the set, or -1 */
	size_t count;      /**< members[0..count) are filled */
	char message[640]; /**< "NAME: why" when the set was not written */
	/** Each member's answer. A member that was free but not written
	 *  because another one stopped the set says what `status` would
	 *  ("absent", "released", "expired", "live"), without a token. */
	lease_result members[LEASE_SET_MAX];
} lease_set_result;

/**
 * Take every lease of @p names (1..LEASE_SET_MAX distinct names) in one
 * atomic write of the store, or none (protocol.md "Sets"): each member is
 * decided as lease_acquire() decides it; when every one is free or expired,
 * one commit per member (its own payload and transitions) and one set CAS
 * (lease_cas_set(): local ref locks, GitHub updateRefs) take them all, and
 * every member is re-read and verified. Every member gets the same new token
 * (one token for the set: release, heartbeat and transition of the set
 * present it once). With opts->wait_seconds > 0, waits for the whole set
 * holding no part of it: for a change of the member that blocked, or its
 * expiry instant, then reads the whole set again (same bounds and wait_cb
 * as lease_acquire()).
 * @return 0 ("acquired"), LEASE_EHELD (a member "held" / "already_held";
 *         blocker names it), LEASE_ECONFIG (the store cannot write a set:
 *         remote stores over libgit2, a transport without cas_many; nothing
 *         written), LEASE_EINVALID (names, duplicates, options), and the
 *         errors of lease_acquire()
 */
REFLEASE_EXTERN int lease_acquire_set(lease_set_result *out, lease_store *st,
                                      const char *const *names, size_t n,
                                      const lease_op_options *opts);

/**
 * Heartbeat every member with opts->lease_token in one atomic write
 * (members not due are not written; when none is due nothing is). A member
 * the token does not hold, or an expired one, stops the whole set: nothing
 * written. @return as lease_heartbeat(), plus LEASE_ECONFIG as
 * lease_acquire_set()
 */
REFLEASE_EXTERN int lease_heartbeat_set(lease_set_result *out, lease_store *st,
                                        const char *const *names, size_t n,
                                        const lease_op_options *opts);

/**
 * Move every member to opts->to in one atomic write; any member that cannot
 * (not holder, expired, already in that phase) stops the set, nothing
 * written. @return as lease_transition(), plus LEASE_ECONFIG
 */
REFLEASE_EXTERN int lease_transition_set(lease_set_result *out, lease_store *st,
                                         const char *const *names, size_t n,
                                         const lease_op_options *opts);

/**
 * Release every member held with opts->lease_token in one atomic write;
 * members already released are skipped; a member whose token is not current
 * makes the set "not_owner" with nothing written (code 0, as
 * lease_release()). @return as lease_release(), plus LEASE_ECONFIG
 */
REFLEASE_EXTERN int lease_release_set(lease_set_result *out, lease_store *st,
                                      const char *const *names, size_t n,
                                      const lease_op_options *opts);

/**
 * Take one of the @p slots slots of the N-slot lease @p name (protocol.md
 * "Slots"): slot i is the ordinary lease "<name>@<i>of<slots>"
 * (lease_slot_name()), taken by lease_acquire() (its own token and
 * generation). The slots are tried in a per-process random rotating order.
 * Before each round and after the write, every ref of the namespace is
 * looked at: a plain lease @p name or a slot of another count is a
 * configuration error naming both (after the write the slot just taken is
 * released first). With opts->wait_seconds > 0 the rounds repeat, waiting
 * between them for a change of one slot (rotating) for at most 1 s (a store
 * that cannot watch: ttl_min/20 s), calling opts->wait_cb as
 * lease_acquire() does.
 * @param out  the slot's result (out->name is the slot's name) or, when
 *             all are held, the one whose holder expires first
 * @return 0, LEASE_EHELD (every slot held, also after the wait or an
 *         interruption), LEASE_ECONFIG (another slot count or a plain
 *         lease), LEASE_EINVALID (name, slots out of 1..LEASE_SLOTS_MAX,
 *         too long), else lease_acquire()'s errors
 */
REFLEASE_EXTERN int lease_slots_acquire(lease_result *out, lease_store *st, const char *name,
                                        int64_t slots, const lease_op_options *opts);

/** The slots of a name as `status NAME` shows them (lease_slots_status()). */
typedef struct lease_slots_view {
	lease_result *items; /**< lease_status() of each slot ref NAME@iofN present, in
	                        name order (owned; free with lease_slots_view_clear()) */
	size_t count;
	/** The count of the slots not released (held, expired or unreadable): N
	 *  when one count is, 0 when none is, -1 when two counts are (a
	 *  slot-count-mismatch, protocol.md "Slots") */
	int64_t slots;
	size_t live; /**< slots of that count held live (status "live") */
} lease_slots_view;

/** Free what @p v owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_slots_view_clear(lease_slots_view *v);

/**
 * The slot refs of the slotted name @p name (protocol.md "Slots": status):
 * one listing of refs/<ns>/<name>@, then lease_status() of each slot ref in
 * it (a read each). Refs under that prefix that are no slot of @p name are
 * left out. @p name is a plain name (a slot's own name is LEASE_EINVALID).
 * @param out  receives the view (the caller's; lease_slots_view_clear());
 *             count 0 when @p name has no slots
 * @return 0, LEASE_EINVALID, the listing's or a read's error (LEASE_ENET,
 *         LEASE_EAUTH, ...), LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_slots_status(lease_slots_view *out, lease_store *st, const char *name);

/* ---- Helpers shared with the heartbeat service and `run` (§4, §6) ---- */

/**
 * Check a TTL the caller asked for explicitly (a `--ttl S`): whole seconds in
 * lease_store_ttl_min()..lease_store_ttl_max() (protocol.md §4). 0, negative
 * and out-of-bounds values are rejected, never replaced by a default (F30).
 * Note: in lease_op_options, ttl_seconds 0 means "default"; a CLI that parsed
 * an explicit `--ttl 0` must reject it with this function first.
 * @param err  receives a message naming the bounds (may be NULL)
 * @return 0, or LEASE_EINVALID
 */
REFLEASE_EXTERN int lease_ttl_validate(const lease_store *st, int64_t ttl_seconds, char *err,
                                       size_t errlen);

/**
 * Whether @p p counts as expired for takeover at @p now: a live phase and
 * now > expires_at + lease_store_skew_margin() (protocol.md §4). Released
 * payloads are never "expired". Judged only from the stored expires_at.
 */
REFLEASE_EXTERN int lease_payload_expired(const lease_store *st, const lease_payload *p,
                                          int64_t now);

/**
 * The TTL, seconds, a payload was granted: ttl_seconds when present; for a
 * pre-bump payload @p assumed_ttl (0 = LEASE_TTL_DEFAULT) and *approximate
 * set to 1 (protocol.md §6). @p approximate may be NULL.
 */
REFLEASE_EXTERN int64_t lease_payload_ttl(const lease_payload *p, int64_t assumed_ttl,
                                          int *approximate);

/**
 * Heartbeat time of @p p, seconds since the epoch: expires_at − ttl_seconds
 * (exact), or expires_at − @p assumed_ttl for a pre-bump payload (sets
 * *approximate; protocol.md §6). @p approximate may be NULL.
 */
REFLEASE_EXTERN int64_t lease_payload_heartbeat_time(const lease_payload *p, int64_t assumed_ttl,
                                                     int *approximate);

/**
 * The TTL, seconds, a preserving write without a TTL option grants over
 * @p p (protocol.md §6): the stored ttl_seconds (LEASE_TTL_DEFAULT for a
 * pre-bump payload, *approximate set), raised to lease_store_ttl_min().
 * @p approximate may be NULL.
 */
REFLEASE_EXTERN int64_t lease_payload_kept_ttl(const lease_store *st, const lease_payload *p,
                                               int *approximate);

/**
 * The heartbeat floor for @p ttl_seconds: max(1, ⌊ttl/10⌋) whole seconds
 * (protocol.md §6). A heartbeat less than this after its parent's is not
 * written (`not_due`) and is flagged by reconcile; one at or above it is
 * neither.
 */
REFLEASE_EXTERN int64_t lease_heartbeat_floor(int64_t ttl_seconds);

/**
 * The longest heartbeat interval for @p ttl_seconds: ⌊ttl/2⌋ seconds
 * (protocol.md §6 "Ceiling"); lease_heartbeat_every() refuses more.
 */
REFLEASE_EXTERN int64_t lease_heartbeat_every_max(int64_t ttl_seconds);

/** Default heartbeat interval for @p ttl_seconds: ttl/3 seconds, at least 1 (§6). */
REFLEASE_EXTERN int64_t lease_heartbeat_interval(int64_t ttl_seconds);

/** kill_grace for @p ttl_seconds: min(10 s, ttl/6), seconds (protocol.md §6). */
REFLEASE_EXTERN double lease_kill_grace(int64_t ttl_seconds);

/**
 * When a holder must consider @p p lost: expires_at − (kill_grace + 2 s),
 * seconds since the epoch on the store clock (protocol.md §6). The TTL is
 * the payload's (lease_payload_ttl() with @p assumed_ttl for pre-bump ones).
 */
REFLEASE_EXTERN double lease_lost_at(const lease_payload *p, int64_t assumed_ttl);

#ifdef __cplusplus
}
#endif
#endif
