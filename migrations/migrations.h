/*
 * migrations.h (internal) — the registry of payload schema migrations
 * (protocol.md §8). One registered step per file, migrations/NNNN_<what>.c,
 * each defining one `const lease_migration lease_migration_NNNN`; registry.c
 * lists them, orders them by id and chains them from version to version.
 * See migrations/README.md for how to add the next one.
 */
#ifndef REFLEASE_MIGRATIONS_H
#define REFLEASE_MIGRATIONS_H

#include "reflease/common.h"
#include "reflease/migrate.h"
#include "reflease/schema.h"

/** What a step may know besides the payload itself. */
typedef struct lease_migration_input {
	int has_commit_time; /**< the payload commit's committer time is known */
	int64_t commit_time; /**< seconds since the epoch, when has_commit_time */
	int64_t assumed_ttl; /**< seconds, --assumed-ttl (within the TTL bounds) */
	int ttl_min;         /**< the store's TTL bounds, seconds (protocol.md §4) */
	int ttl_max;
	const lease_random *random; /**< for the new nonce */
} lease_migration_input;

/**
 * Rewrite @p p (at the step's "from" version) in place to the step's "to"
 * version. Must change nothing a lease's holder relies on: owner, host,
 * phase, token, transitions, acquired_at, expires_at (protocol.md §8).
 * @param method  receives how derived values were chosen (METHOD_NONE if n/a)
 * @param err     receives the reason on failure (may be NULL)
 * @return 0, LEASE_EPAYLOAD (cannot be migrated), or LEASE_ENOMEM/randomness errors
 */
typedef int (*lease_migration_apply_fn)(lease_payload *p, lease_migrate_method *method,
                                        const lease_migration_input *in, char *err, size_t errlen);

/** One registered step from schema version from_major.from_minor.x to "to". */
typedef struct lease_migration {
	const char *id; /**< "0001": four digits, the file's prefix; orders the steps */
	int from_major; /**< applies to payloads of from_major.from_minor.* */
	int from_minor;
	const char *to; /**< resulting sdlc_version, "X.Y.Z" */
	int to_major;
	int to_minor;
	int to_patch;
	const char *description; /**< one line, for plans and the README */
	lease_migration_apply_fn apply;
} lease_migration;

/* The registered steps (one per file). */
extern const lease_migration lease_migration_0001;

/** Number of registered migrations. */
size_t lease_migrations_count(void);
/** The @p i-th migration in id order (borrowed), or NULL past the end. */
const lease_migration *lease_migration_at(size_t i);
/** The step that starts at version @p major.@p minor (borrowed), or NULL. */
const lease_migration *lease_migration_from(int major, int minor);

/**
 * Check the registry: ids strictly increasing four-digit strings, each step
 * raises the version, each step after the first starts where the previous
 * one ended, and `to` agrees with to_major/to_minor/to_patch.
 * @return 0, or LEASE_EINTERNAL with the broken rule in @p err
 */
int lease_migrations_check(char *err, size_t errlen);

/**
 * The chain of steps that takes a payload of version @p major.@p minor to
 * @p to_major.@p to_minor: at most @p max step pointers into @p steps,
 * their number in @p n (0 when already there).
 * @return 0, LEASE_EVERSION (the payload is newer than the target), or
 *         LEASE_EINVALID (no registered chain reaches the target)
 */
int lease_migrations_chain(const lease_migration **steps, size_t max, size_t *n, int major,
                           int minor, int to_major, int to_minor);

/** Parse "X.Y.Z" (non-negative integers, no leading '+'/'-'); 0 or LEASE_EINVALID. */
int lease_migration_version_parse(const char *s, int *major, int *minor, int *patch);

#endif
