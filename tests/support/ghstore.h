/**
 * @file ghstore.h
 * A lease store on the fake GitHub (tests/support/fakegh.h) for the GitHub
 * suites (test_github, test_github_runtime, test_github_net): the fake and
 * the store on one virtual clock (tests/support/vclock.h), the store
 * "github:octo/leases" at the fake's API URL, logging at debug level.
 */
#ifndef REFLEASE_GHSTORE_H
#define REFLEASE_GHSTORE_H

#include "reflease/schema.h"
#include "reflease/store.h"
#include "support/fakegh.h"
#include "support/vclock.h"

/**
 * Start @p vc at the present time (vclock_init) and a fake on it
 * (fakegh_start_clocked with @p o, NULL for the defaults): 0, or -1 when the
 * fake does not start.
 */
int ghstore_start(fakegh **out, const fakegh_options *o, vclock *vc);

/**
 * Fill @p o (from LEASE_STORE_OPTIONS_INIT) for a store at @p api_url with
 * @p token, a deadline of @p timeout_s seconds, a verify window of
 * @p verify_ms ms, every line logged at debug level to @p log, on @p vc's
 * monotonic time when not NULL (vclock_apply without its wall time: the
 * store keeps the Date header's). The strings are borrowed.
 */
void ghstore_options(lease_store_options *o, const char *api_url, const char *token, int timeout_s,
                     int verify_ms, vclock *vc, lease_log_fn log);

/** Open @p o's store "github:octo/leases": lease_store_open's code; a failure's message on stderr.
 */
int ghstore_open(lease_store **out, const lease_store_options *o);

/**
 * A 1.1 payload message (lease_message_build, op acquire) for @p name held
 * by @p owner on host "runner-1" with @p token, in @p phase after
 * @p transitions transitions, acquired at @p acquired_at and expiring at
 * @p expires_at (seconds since the epoch), TTL 300 s, a random nonce.
 * The caller frees it; a failed build fails the test.
 */
char *ghstore_message(const char *name, const char *owner, const char *token, lease_phase phase,
                      unsigned transitions, int64_t acquired_at, int64_t expires_at);

/**
 * The lease @p name as @p f's repository holds it (refs/leases/<name>):
 * 1 with *@p oid, or 0 absent (fakegh_get_ref).
 */
int ghstore_ref_at(fakegh *f, const char *name, lease_oid *oid);

/** Free *@p st and stop *@p fk (a test's teardown); both set to NULL. */
void ghstore_stop(lease_store **st, fakegh **fk);

#endif
