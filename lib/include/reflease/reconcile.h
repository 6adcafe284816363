/**
 * @file reconcile.h
 * The batch sweep (protocol.md §7): one namespace listing, each lease read
 * with its parent commit and classified with stable anomaly ids; opt-in
 * actions (reap, prune, stale ref-lock removal), each a CAS on the oid read;
 * and a lease's history (every payload it ever had, newest first).
 */
#ifndef REFLEASE_RECONCILE_H
#define REFLEASE_RECONCILE_H

#include "common.h"
#include "primitives.h"
#include "schema.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Severity of an anomaly, lowest first; LEASE_SEV_OK = no anomaly (protocol.md §7). */
typedef enum lease_severity {
	LEASE_SEV_OK = 0,
	LEASE_SEV_INFO = 1,
	LEASE_SEV_WARNING = 2,
	LEASE_SEV_ERROR = 3,
	LEASE_SEV_NEVER = 4 /**< only as a --fail-on threshold: nothing fails */
} lease_severity;

/** Wire name of a severity: "ok", "info", "warning", "error", "never". */
REFLEASE_EXTERN const char *lease_severity_name(lease_severity sev);
/**
 * Parse a --fail-on level ("error", "warning", "info", "never").
 * @return 0, or LEASE_EINVALID
 */
REFLEASE_EXTERN int lease_severity_parse(lease_severity *out, const char *s);

/** Stable anomaly ids (protocol.md §7), in report order. */
typedef enum lease_anomaly_id {
	LEASE_ANOM_MALFORMED_PAYLOAD = 0,
	LEASE_ANOM_UNSUPPORTED_VERSION,
	LEASE_ANOM_NAME_MISMATCH,
	LEASE_ANOM_NOT_A_COMMIT,
	LEASE_ANOM_INVALID_NAME,
	LEASE_ANOM_EXPIRED,
	LEASE_ANOM_HEARTBEAT_FLOOR,
	LEASE_ANOM_CLOCK_SKEW,
	LEASE_ANOM_STALE_REF_LOCK,
	LEASE_ANOM_PRE_BUMP,
	LEASE_ANOM_MISSING_OBJECT, /**< the ref's object is absent from the store (issue 14) */
	LEASE_ANOM_SYMBOLIC_REF,   /**< the ref is a symbolic ref (issue 14) */
	LEASE_ANOM_UNREADABLE_REF, /**< the ref's file is empty, garbled or unreadable (issue 23) */
	LEASE_ANOM_STALE_TICKET,   /**< a fair waiter's ticket that is no longer live (issue 28) */
	LEASE_ANOM_SLOT_COUNT_MISMATCH, /**< refs of one NAME of two slot counts, or slots and a
	                                   plain lease NAME, not released at once (protocol.md
	                                   "Slots") */
	LEASE_ANOM_CUT_SET_WRITE,       /**< a live member of a set write a crash cut before it
	                                   reached every member: held by no one (protocol.md "Sets",
	                                   issue 40 B65) */
	LEASE_ANOM__COUNT
} lease_anomaly_id;

/** The id's wire name ("malformed-payload", "heartbeat-rate-above-floor", ...). */
REFLEASE_EXTERN const char *lease_anomaly_name(lease_anomaly_id id);

/** How a heartbeat time was obtained (protocol.md §6). */
typedef enum lease_hb_method {
	LEASE_HB_EXACT = 0,      /**< expires_at − ttl_seconds of 1.1 payloads */
	LEASE_HB_APPROXIMATE = 1 /**< a pre-bump payload: expires_at − assumed TTL */
} lease_hb_method;

/** "exact" or "approximate". */
REFLEASE_EXTERN const char *lease_hb_method_name(lease_hb_method m);

/** One anomaly of one lease. Owns no heap memory. */
typedef struct lease_anomaly {
	lease_anomaly_id id;
	lease_severity severity;
	char message[320]; /**< human detail; may quote payload text (escape before printing) */
	int has_floor;     /**< heartbeat-rate-above-floor: the figures below are set */
	lease_hb_method method;
	int64_t interval_seconds; /**< tip's heartbeat time minus its parent's, s */
	double floor_seconds;     /**< max(1, ttl_seconds / 10), s */
	int64_t assumed_ttl; /**< the TTL assumed for a pre-bump payload, s (approximate only) */
	int64_t seconds;     /**< expired: seconds past expires_at; stale-ref-lock: lock age;
	                        stale-ticket: seconds past the oldest stale ticket's expires_at */
	/* slot-count-mismatch only: this ref's slot count, and the not-released ref of
	   another configuration met before it in the walk (name order) */
	int64_t slots;                  /**< N of this slot ref NAME@iofN */
	char other[LEASE_NAME_MAX + 1]; /**< the other ref's name (NAME, or NAME@jofM) */
	int64_t other_slots;            /**< M of the other ref; 0: a plain lease NAME */
} lease_anomaly;

/** What an action did to one lease (reported in reaped / skipped / pruned). */
typedef enum lease_action_status {
	LEASE_ACTION_NONE = 0,
	LEASE_ACTION_REAPED,       /**< a `released` payload was written (op reap) */
	LEASE_ACTION_PRUNED,       /**< archived and deleted */
	LEASE_ACTION_LOCK_REMOVED, /**< a stale ref lock file was removed */
	LEASE_ACTION_SKIPPED       /**< an action was due but not done (lost race, error) */
} lease_action_status;

/** One scanned entry: a lease ref, an invalid-named ref, or a stale ref lock. */
typedef struct lease_reconcile_entry {
	char *name;      /**< the ref's name after refs/<ns>/ (owned) */
	int present;     /**< the ref exists (0: only a lock file was found) */
	lease_oid oid;   /**< the ref's target when present */
	int has_payload; /**< payload readable (also with name-mismatch / newer minor) */
	lease_payload payload;
	lease_op op;              /**< summary op of the tip commit */
	lease_anomaly *anomalies; /**< owned; each id at most once */
	size_t anomaly_count;
	lease_severity highest; /**< LEASE_SEV_OK when clean */
	lease_action_status action;
	const char *action_kind; /**< "reap", "prune", "remove-lock" (static) or NULL */
	lease_oid action_oid;    /**< REAPED: the released commit */
	char *archive_ref;       /**< PRUNED: the archive ref written (owned) */
	char *action_message;    /**< SKIPPED: why (owned), else NULL */
	int action_code;  /**< SKIPPED: the LEASE_E* code why; LEASE_ECAS when a concurrent write
	                     won (the CAS doing its job, not a failure); else 0 */
	int lock_removed; /**< a stale lock of this ref was removed (with --reap) */
	size_t tickets_removed; /**< stale tickets of this lease's queue deleted (with --reap) */
} lease_reconcile_entry;

/** The result of lease_reconcile(). Free with lease_reconcile_report_free(). */
typedef struct lease_reconcile_report {
	char ns[LEASE_NS_MAX + 1];
	int64_t now;                    /**< store time of the sweep, s */
	int64_t grace_seconds;          /**< the margin used: max(grace, skew margin), s */
	lease_reconcile_entry *entries; /**< sorted by name */
	size_t count;
	size_t counts[4]; /**< entries by highest severity: [OK, INFO, WARNING, ERROR] */
	size_t reaped, pruned, skipped, locks_removed;
	int64_t paced_ms;       /**< waited between the writes of successive leases (GitHub asks for
	                           >= 1 s in bursts; issue 15), ms */
	size_t tickets_removed; /**< stale tickets deleted (--reap; protocol.md §5 "Fair
	                           waiting") */
} lease_reconcile_report;

#define LEASE_RECONCILE_OPTIONS_VERSION 1

/** Options for lease_reconcile(). Initialise with LEASE_RECONCILE_OPTIONS_INIT. */
typedef struct lease_reconcile_options {
	unsigned int version;
	int64_t grace_seconds; /**< --grace, s; < 0 = the store's skew margin */
	int reap; /**< --reap: release expired leases, remove stale ref locks and tickets */
	int64_t prune_days;       /**< --prune-released DAYS; < 0 = do not prune */
	int64_t default_ttl;      /**< TTL assumed for pre-bump payloads, s; 0 = 300 (§6) */
	int64_t lock_age_seconds; /**< a ref lock older than this is stale, s; 0 = 60 */
	const char *owner;        /**< the reaper's identity, written in `released`; NULL =
	                             "reflease-reconcile" */
	const char *host;         /**< NULL = "localhost" */
	/** Called every few hundred leases (done of total); may be NULL. */
	void (*progress)(size_t done, size_t total, void *payload);
	void *progress_payload;
} lease_reconcile_options;

#define LEASE_RECONCILE_OPTIONS_INIT                                                               \
	{                                                                                          \
		LEASE_RECONCILE_OPTIONS_VERSION, -1, 0, -1, 0, 0, NULL, NULL, NULL, NULL           \
	}

/**
 * Sweep the store's namespace (protocol.md §7): one listing, each lease
 * read with its parent commit and classified; every scanned lease is
 * reported, an unreadable one never stops the sweep. Then the opt-in actions,
 * each a CAS on the oid read: a concurrent write wins and the lease is
 * reported skipped, never clobbered.
 * @param out   filled; the caller frees it with lease_reconcile_report_free()
 *              (also after a failure)
 * @param opts  NULL = defaults (classify only)
 * @return 0 (anomalies are data, not errors), LEASE_EINVALID (options),
 *         LEASE_EUNVERIFIED (inconsistent listing), LEASE_ENET, LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_reconcile(lease_reconcile_report *out, lease_store *st,
                                    const lease_reconcile_options *opts);

/**
 * Called by lease_reconcile_each() once per entry, in name order, after the
 * entry's action: @p e is borrowed for the call. Return 0 to go on, anything
 * else to stop the sweep with that value (returned when negative).
 */
typedef int (*lease_reconcile_visit)(const lease_reconcile_entry *e, void *payload);

/**
 * lease_reconcile() in bounded memory (issue 29, protocol.md §7): the same
 * sweep, entries and actions, but each entry is handed to @p visit as it is
 * done and then freed, so the sweep holds one lease's state and entry beyond
 * the listing and the stale-lock entries, whatever the namespace's size. One
 * entry that cannot be read consistently is read on its own
 * (lease_namespace_each()), never ending the sweep.
 * @param summary  filled like lease_reconcile()'s report but without entries
 *                 (count = entries visited; counts, actions, now, ...); free
 *                 it with lease_reconcile_report_free()
 * @return 0, the first negative value of @p visit, LEASE_EINVALID (options),
 *         LEASE_ENET, LEASE_ENOMEM, or the listing's error — also when a part
 *         of a listing read part by part fails after others were swept (the
 *         summary then covers the entries visited: an incomplete sweep)
 */
REFLEASE_EXTERN int lease_reconcile_each(lease_reconcile_report *summary, lease_store *st,
                                         const lease_reconcile_options *opts,
                                         lease_reconcile_visit visit, void *payload);

/** Free what @p r owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_reconcile_report_free(lease_reconcile_report *r);

/** The highest severity found in @p r (LEASE_SEV_OK when clean). */
REFLEASE_EXTERN lease_severity lease_reconcile_highest(const lease_reconcile_report *r);

/**
 * Classify one lease read (protocol.md §6, §7): fills @p e from @p s, using
 * s->parent_commit when present. Exposed for tests.
 * @param now            store time, s
 * @param skew_margin    the store's skew margin, s (clock-skew: "beyond the margin")
 * @param expire_margin  max(grace, skew margin), s (expired)
 * @param default_ttl    TTL assumed for pre-bump payloads, s
 * @return 0 or LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_reconcile_classify(lease_reconcile_entry *e, const lease_ref_state *s,
                                             int64_t now, int64_t skew_margin,
                                             int64_t expire_margin, int64_t default_ttl);

/** Free what @p e owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_reconcile_entry_clear(lease_reconcile_entry *e);

/** One payload of a lease's history (newest first). */
typedef struct lease_history_item {
	lease_oid oid;
	int is_commit;
	int64_t commit_time; /**< committer time, s */
	lease_op op;         /**< summary op (LEASE_OP_UNKNOWN for foreign commits) */
	int payload_rc;      /**< 0, LEASE_EPAYLOAD or LEASE_EVERSION */
	char payload_error[256];
	lease_payload payload; /**< valid when payload_rc == 0 */
	int has_hb_time;       /**< heartbeat time below is set */
	int64_t hb_time;       /**< expires_at − ttl (or the assumed TTL), s */
	lease_hb_method hb_method;
	int64_t assumed_ttl;      /**< approximate: the TTL assumed, s */
	int is_heartbeat;         /**< a heartbeat of the same tenure as its parent (§6) */
	int has_interval;         /**< is_heartbeat and the parent's heartbeat time is known */
	int64_t interval_seconds; /**< hb_time minus the parent's, s */
	lease_hb_method interval_method; /**< exact only when both payloads are 1.1 */
	/** A fair waiter's acquire (payload.has_queued_at, protocol.md §5 "Fair
	 *  waiting"): the store time it waited, from queued_at to the commit's
	 *  write time (expires_at − ttl_seconds), s, >= 0. The waiter is the
	 *  payload's owner@host; payload.queue_position its place at entry. */
	int has_wait;
	int64_t waited_seconds;
} lease_history_item;

/** A lease's history. Free with lease_history_free(). */
typedef struct lease_history {
	char name[LEASE_NAME_MAX + 1];
	int present;               /**< 0: the ref is absent (no items) */
	lease_history_item *items; /**< newest first */
	size_t count;
	int truncated; /**< the walk stopped at @p max_items */
} lease_history;

/**
 * Every payload refs/<ns>/<name> ever had, newest first, following first
 * parents; heartbeat intervals per protocol.md §6 with the method used, and
 * each fair waiter's wait (§5 "Fair waiting"; a waiter that gave up wrote
 * nothing to the lease and is not in it).
 * @param out          filled; free with lease_history_free() (also after a failure)
 * @param max_items    stop after this many commits; 0 = no limit
 * @param default_ttl  TTL assumed for pre-bump payloads, s; 0 = 300
 * @return 0, LEASE_EINVALID (name), LEASE_EUNVERIFIED (an object read back
 *         with another oid), LEASE_ENET, LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_history_read(lease_history *out, lease_store *st, const char *name,
                                       size_t max_items, int64_t default_ttl);

/** Free what @p h owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_history_free(lease_history *h);

#ifdef __cplusplus
}
#endif
#endif
