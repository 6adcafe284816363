/**
 * @file schemas.h (internal)
 * What schemas.c owns beside the public reflease/schema.h (protocol.md §1,
 * §2): the version stamp every written payload carries and the archive
 * ref's name, built and checked in one place.
 */
#ifndef REFLEASE_LEASE_SCHEMAS_H
#define REFLEASE_LEASE_SCHEMAS_H

#include "reflease/schema.h"

#include <stddef.h>
#include <stdint.h>

/** Stamp @p p with the schema this build writes (sdlc_version, its numbers). */
void lease__payload_stamp(lease_payload *p);

/**
 * The archive ref of lease @p name in namespace @p ns for its released
 * payload @p p: refs/<ns>-archive/<name>/<YYYYMMDDTHHMMSSZ>-<first 8 hex of
 * the token>, the time its expires_at (protocol.md §1).
 * @return 0, or LEASE_EINVALID when it does not fit @p outlen bytes
 */
int lease__archive_refname(char *out, size_t outlen, const char *ns, const char *name,
                           const lease_payload *p);

/** refs/<ns>-archive/<name>/, the prefix of @p name's archive refs (§1). 0 or LEASE_EINVALID. */
int lease__archive_prefix(char *out, size_t outlen, const char *ns, const char *name);

/** Whether @p tail is an archive ref's last part, <YYYYMMDDTHHMMSSZ>-<8 hex> (§1): 1 or 0. */
int lease__archive_tail_valid(const char *tail);

/** What a commit message shows read leniently: whatever its payload's version or name. */
typedef struct lease_lenient {
	int64_t transitions; /**< the first `"transitions":N` (N >= 0), -1 when none */
	int released;        /**< it says `"phase":"released"` */
	int has_expires;     /**< an `"expires_at":"…"` that parses */
	int64_t expires_at;  /**< ... its value, s since the epoch */
} lease_lenient;

/**
 * Read @p msg (may be NULL) leniently into @p out (protocol.md §5 `break`,
 * §7): the fencing generation a payload this build rejects still shows, and
 * whether it shows the lease free.
 */
void lease__lenient_read(lease_lenient *out, const char *msg);

#endif
