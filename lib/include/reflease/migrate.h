/**
 * @file migrate.h
 * Payload migrations (protocol.md §8): plan, or apply, the registered schema
 * steps of migrations/ to every lease of the store's namespace. Each write is
 * a CAS from the oid read; a migration never extends or shortens a lease.
 */
#ifndef REFLEASE_MIGRATE_H
#define REFLEASE_MIGRATE_H

#include "common.h"
#include "primitives.h"
#include "schema.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What happened (or would happen) to one lease (cli.md "migrate --json"). */
typedef enum lease_migrate_status {
	LEASE_MIGRATE_WOULD_MIGRATE = 0, /**< plan: older than the target, migratable */
	LEASE_MIGRATE_MIGRATED,          /**< apply: the migration commit landed */
	LEASE_MIGRATE_CURRENT,           /**< already at the target version (nothing to do) */
	LEASE_MIGRATE_SKIPPED_NEWER,     /**< newer minor or another major: never rewritten */
	LEASE_MIGRATE_SKIPPED_MALFORMED, /**< unreadable payload, name mismatch, not a commit */
	LEASE_MIGRATE_CONFLICT,          /**< concurrent writers beat every attempt (§8) */
	LEASE_MIGRATE_STATUS_COUNT       /**< number of statuses (not a status) */
} lease_migrate_status;

/** Wire name of @p s ("would_migrate", ...); "unknown" when out of range. Static. */
REFLEASE_EXTERN const char *lease_migrate_status_name(lease_migrate_status s);

/** One lease of a migration run. Owns no heap memory. */
typedef struct lease_migrate_entry {
	char name[LEASE_NAME_MAX + 1]; /**< the ref's lease name */
	char from[32];                 /**< sdlc_version as read; "" when unreadable */
	char to[32];                   /**< version after the run (target when migrated or planned,
	                                  @c from when current); "" when skipped */
	/**
	 * How the last step that derived a value derived it (or would), as
	 * that step names it: a static string owned by the step, never freed.
	 * Migration 0001 (ttl_seconds): "commit-time" (expires_at − the
	 * payload commit's time, clamped), "assumed" (--assumed-ttl) or
	 * "released" (0). NULL when no step derived a value (none ran:
	 * current, skipped), printed as null / "-" (protocol.md §8, cli.md
	 * "migrate --json").
	 */
	const char *method;
	lease_migrate_status status;
	int64_t ttl_seconds; /**< the ttl_seconds written (or planned); -1 when none */
	lease_oid old_oid;   /**< the oid read last (the CAS's expected oid) */
	int has_new_oid;     /**< new_oid is valid (status migrated) */
	lease_oid new_oid;   /**< the migration commit that landed */
	int attempts;        /**< writes tried (0 in a plan) */
	char message[256];   /**< detail (parse error, conflict reason), one line without control
	                        characters; "" when none */
} lease_migrate_entry;

/** Result of lease_migrate(). Free with lease_migrate_report_clear(). */
typedef struct lease_migrate_report {
	char target[32];              /**< target schema version, e.g. "1.1.0" */
	int applied;                  /**< 1 when writes were requested (--apply) */
	lease_migrate_entry *entries; /**< sorted by name; owned */
	size_t count;
	size_t counts[LEASE_MIGRATE_STATUS_COUNT]; /**< entries per status */
	size_t invalid_names;                      /**< refs under refs/<ns>/ with invalid
	                                              names: never migrated, not in entries */
	int64_t paced_ms; /**< waited between the writes of successive leases (GitHub asks for
	                     >= 1 s in bursts; issue 15), ms */
} lease_migrate_report;

/** Free what @p r owns and zero it. Accepts NULL. */
REFLEASE_EXTERN void lease_migrate_report_clear(lease_migrate_report *r);

#define LEASE_MIGRATE_OPTIONS_VERSION 1

/** Most re-read-and-retry rounds after a lost CAS before `conflict` (protocol.md §8). */
#define LEASE_MIGRATE_MAX_RETRIES 3

/**
 * Options for lease_migrate(). Initialise with LEASE_MIGRATE_OPTIONS_INIT;
 * NULL options mean a plan to SDLC_VERSION.
 */
typedef struct lease_migrate_options {
	unsigned int version;
	int apply;           /**< 0 = plan only (no write), 1 = write (--apply) */
	const char *to;      /**< target version ("1.1.0"); NULL = SDLC_VERSION */
	int64_t assumed_ttl; /**< seconds, used when a commit time is unknown; 0 = 300.
	                        Must lie within the store's TTL bounds (protocol.md §4). */
	/**
	 * Test and tooling hook, may be NULL: called after each read and before
	 * the CAS that would replace @p read_oid (attempt counts from 1). A
	 * non-zero return aborts the run with that code.
	 */
	int (*before_write)(lease_store *st, const char *name, const lease_oid *read_oid,
	                    int attempt, void *payload);
	void *hook_payload;
} lease_migrate_options;

#define LEASE_MIGRATE_OPTIONS_INIT                                                                 \
	{                                                                                          \
		LEASE_MIGRATE_OPTIONS_VERSION, 0, NULL, 0, NULL, NULL                              \
	}

/**
 * Check a `--to` version: "X.Y.Z", the target of a registered migration and
 * not newer than SDLC_VERSION. No I/O.
 * @param err  receives the rule broken and the valid targets (may be NULL)
 * @return 0, or LEASE_EINVALID
 */
REFLEASE_EXTERN int lease_migrate_target_validate(const char *version, char *err, size_t errlen);

/**
 * Plan or apply migrations over every lease of the store's namespace
 * (protocol.md §8), one lease_fetch_namespace() sweep. A payload older than
 * the target is rewritten by the chained registered steps (0001: adds
 * ttl_seconds, sets sdlc_version and a new nonce, keeps every other field);
 * the commit's parent is the oid read and its summary op is `migrate`.
 * Each write is a lease_cas_replace() from the oid read. After a failed or
 * unverified CAS the lease is re-read: a tip that is or descends from a
 * commit written here is `migrated`; a tip at the target version (a holder
 * heartbeated with a current client) is `current`; otherwise the lease is
 * migrated again from the new tip, at most LEASE_MIGRATE_MAX_RETRIES times,
 * then `conflict`. Malformed and newer payloads are skipped and reported. A
 * commit time is "known" when the transport supplied one (lease_commit.time
 * greater than 0).
 * @param out   filled (also on failure, with the entries decided so far);
 *              the caller frees it with lease_migrate_report_clear()
 * @return 0 (the report tells conflicts), LEASE_EINVALID (bad target or
 *         assumed TTL), or a transport error (LEASE_ENET, LEASE_EAUTH,
 *         LEASE_EUNVERIFIED listing, LEASE_ENOMEM) that stopped the sweep
 */
REFLEASE_EXTERN int lease_migrate(lease_migrate_report *out, lease_store *st,
                                  const lease_migrate_options *opts);

#ifdef __cplusplus
}
#endif
#endif
