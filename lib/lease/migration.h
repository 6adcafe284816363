/**
 * @file migration.h (internal)
 * The step interface of payload schema migrations (protocol.md §8) and the
 * registry that lib/lease/migrate.c runs them through. One step per file,
 * migrations/NNNN_<what>.c, each defining one
 * `const lease_migration lease_migration_NNNN`; the build lists the files
 * (one `MIGRATION(NNNN)` line each, in id order, into
 * $(BUILD)/migrations/registry.inc) and migrations/registry.c registers
 * them from that list. Adding a step is adding its file; no header names a
 * step (migrations/README.md).
 *
 * Dependencies run one way: migrations/ includes this header and public
 * reflease/ headers; nothing in lib/ includes anything from migrations/.
 */
#ifndef REFLEASE_LEASE_MIGRATION_H
#define REFLEASE_LEASE_MIGRATION_H

#include <stddef.h>
#include <stdint.h>

#include "reflease/common.h"
#include "reflease/schema.h"
#include "util/util.h" /* lease__error_set(): how a step says why it failed */

/** What a step may know besides the payload itself. Borrowed by the step. */
typedef struct lease_migration_input {
	int has_commit_time;        /**< 1 when the payload commit's committer time is known
	                               (the transport supplied one greater than 0, §8) */
	int64_t commit_time;        /**< seconds since the epoch, when has_commit_time */
	int64_t assumed_ttl;        /**< seconds, --assumed-ttl (within the TTL bounds) */
	int ttl_min;                /**< the store's smallest TTL, seconds (protocol.md §4) */
	int ttl_max;                /**< the store's largest TTL, seconds (protocol.md §4) */
	const lease_random *random; /**< randomness for the new nonce; NULL = the default */
} lease_migration_input;

/**
 * Rewrite @p p (at the step's "from" version) in place to the step's "to"
 * version. Must change nothing a lease's holder relies on: owner, host,
 * phase, token, transitions, acquired_at, expires_at (protocol.md §8). No
 * I/O, no printing.
 * @param method  left untouched when the step derived nothing; else set to
 *                how a derived value was chosen: a static string owned by
 *                the step (e.g. "commit-time"), printed as the entry's
 *                `method` by `migrate` (cli.md "migrate --json")
 * @param err     receives the reason on failure (may be NULL)
 * @return 0, LEASE_EPAYLOAD (cannot be migrated; the lease is reported
 *         skipped_malformed), or LEASE_ENOMEM / a randomness error
 */
typedef int (*lease_migration_apply_fn)(lease_payload *p, const char **method,
                                        const lease_migration_input *in, char *err, size_t errlen);

/** One registered step from schema version from_major.from_minor.x to "to". Static. */
typedef struct lease_migration {
	const char *id; /**< "0001": four digits, the file's prefix; orders the steps */
	int from_major; /**< applies to payloads of from_major.from_minor.* */
	int from_minor;
	const char *to; /**< resulting sdlc_version, "X.Y.Z" */
	int to_major;   /**< the numbers of @c to */
	int to_minor;
	int to_patch;
	const char *description; /**< one line, for plans and the README */
	lease_migration_apply_fn apply;
} lease_migration;

/**
 * The end of every step (protocol.md §8): stamp @p p with step @p m's "to"
 * version (sdlc_version and the version_* numbers) and a new nonce drawn
 * from @p in->random. No I/O.
 * @return 0, or the randomness error (then @p p is unchanged)
 */
int lease__migration_stamp(lease_payload *p, const lease_migration *m,
                           const lease_migration_input *in);

/** Number of registered migrations (the numbered files of migrations/). */
size_t lease__migrations_count(void);

/** The @p i-th migration in id order (borrowed, static), or NULL past the end. */
const lease_migration *lease__migration_at(size_t i);

/** The step that starts at version @p major.@p minor (borrowed, static), or NULL. */
const lease_migration *lease__migration_from(int major, int minor);

/**
 * Check the registry (protocol.md §8): every id is four digits and names the
 * file it was registered from, ids strictly increase, every step has an
 * apply function and a one-line description, raises the version, starts
 * where the previous one ended, and its `to` agrees with
 * to_major/to_minor/to_patch. No I/O.
 * @param err  receives "migration NNNN: <the broken rule>" (may be NULL)
 * @return 0, or LEASE_EINTERNAL
 */
int lease__migrations_check(char *err, size_t errlen);

/**
 * The chain of steps that takes a payload of version @p major.@p minor to
 * @p to_major.@p to_minor (protocol.md §8): at most @p max borrowed step
 * pointers into @p steps, their number in @p n (0 when already there).
 * @return 0, LEASE_EVERSION (the payload is newer than the target), or
 *         LEASE_EINVALID (no registered chain reaches the target)
 */
int lease__migrations_chain(const lease_migration **steps, size_t max, size_t *n, int major,
                            int minor, int to_major, int to_minor);

/**
 * Parse "X.Y.Z" into its numbers: non-negative decimal integers up to
 * 1000000, no sign, nothing after the patch (protocol.md §2 sdlc_version).
 * @return 0, or LEASE_EINVALID (outputs then unspecified)
 */
int lease__migration_version_parse(const char *s, int *major, int *minor, int *patch);

#endif
