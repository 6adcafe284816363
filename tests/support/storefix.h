/**
 * @file storefix.h
 * Stores for tests, opened in one line: an in-memory one (memstore.h) or a
 * local one on a temporary repository (testrepo.h), with the caller's store
 * options; and a virtual clock for those options. A failed open fails the
 * test with the open's message.
 *
 *     int64_t now = T0;
 *     lease_store_options o = LEASE_STORE_OPTIONS_INIT;
 *     o.clock.now = storefix_clock;
 *     o.clock.payload = &now;
 *     st = storefix_mem(&mem, &o);            // or storefix_local(dir, &o)
 */
#ifndef REFLEASE_TEST_STOREFIX_H
#define REFLEASE_TEST_STOREFIX_H

#include <stddef.h>
#include <stdint.h>

#include "reflease.h"
#include "support/memstore.h"

/**
 * A store clock (lease_store_options.clock.now) reading the store time, in
 * seconds since the epoch, from the int64_t its payload points at: the test
 * moves time by assigning it.
 */
int64_t storefix_clock(void *payload);

/**
 * A store on transport @p t (NULL: the test fails, as for an allocation that
 * failed), which it owns from then on, with @p o (NULL: defaults); the
 * caller's (lease_store_free).
 */
lease_store *storefix_transport(lease_transport *t, const lease_store_options *o);

/**
 * A store on a new in-memory transport with @p o (NULL: defaults); *@p mem
 * (when @p mem is not NULL) receives the memstore, valid until the store is
 * freed. The store is the caller's (lease_store_free).
 */
lease_store *storefix_mem(memstore **mem, const lease_store_options *o);

/** The store @p spec (lease_store_open) with @p o (NULL: defaults); the caller's
 * (lease_store_free). */
lease_store *storefix_open(const char *spec, const lease_store_options *o);

/** The store "local:@p dir" with @p o (NULL: defaults); the caller's (lease_store_free). */
lease_store *storefix_local(const char *dir, const lease_store_options *o);

/**
 * Operation options for @p owner on @p host with @p token (NULL: none) and a
 * TTL of @p ttl_seconds; the rest LEASE_OP_OPTIONS_INIT's.
 */
lease_op_options storefix_op(const char *owner, const char *host, const char *token,
                             int64_t ttl_seconds);

/**
 * Set @p k's lease from acquire's answer @p acq: @p owner on @p host, its
 * token, a TTL of @p ttl_seconds, and what is known of it (the stored expiry,
 * a stored TTL of @p known_ttl seconds, the store time of the answer). The
 * other fields stay as they are.
 */
void storefix_keep_from(lease_keep_options *k, const char *owner, const char *host,
                        const lease_result *acq, int64_t ttl_seconds, int64_t known_ttl);

/**
 * A new reflease store (lease_store_init_local) in a new temporary directory
 * under $TMPDIR; its path to @p out (@p outlen bytes). Remove it with
 * testrepo_remove().
 */
void storefix_local_dir(char *out, size_t outlen);

/** Fail the test unless lease_fetch_namespace() on @p st lists @p n leases. */
void storefix_expect_count(lease_store *st, size_t n);

/** Fail the test unless lease_fetch_ref() on @p st reads @p name absent. */
void storefix_expect_absent(lease_store *st, const char *name);

#endif
