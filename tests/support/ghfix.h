/**
 * @file ghfix.h
 * The GitHub harness the GitHub suites share (test_github.c,
 * test_github_runtime.c, test_github_net.c, test_wait.c): a fake GitHub
 * server on loopback (fakegh.h) that the library's GitHub transport is
 * pointed at, and a store on "github:octo/leases" logging to logcap.h.
 *
 * Usage, as a checked fixture:
 *
 *     static fakegh *fk;
 *     static lease_store *st;
 *     static void setup(void) { ghfix_begin(&fk, &st, NULL, CANARY, 5, 2000); }
 *     static void teardown(void) { ghfix_end(&fk, &st); }
 */
#ifndef REFLEASE_TEST_GHFIX_H
#define REFLEASE_TEST_GHFIX_H

#include "reflease.h"
#include "support/fakegh.h"

/**
 * Start the fake GitHub with @p o (NULL: every default), point the GitHub
 * transport at it (GITHUB_API_URL; GITHUB_GRAPHQL_URL derived), forget any
 * token or token file from the environment (GITHUB_TOKEN,
 * REFLEASE_GITHUB_TOKEN, REFLEASE_GITHUB_TOKEN_FILE: a test names its token)
 * and the lines logcap kept. Fails the test when the fake cannot start.
 * @return the fake (the caller's: ghfix_stop)
 */
fakegh *ghfix_start(const fakegh_options *o);

/** Stop @p f (NULL: nothing) and unset the token file variable a test may have set. */
void ghfix_stop(fakegh *f);

/**
 * Open "github:octo/leases" with @p token, a @p timeout_s second deadline
 * per operation and a @p verify_ms millisecond verify window, logging every
 * level to logcap. The store is the caller's (lease_store_free).
 * @return 0, or the open's negative code (its message on stderr)
 */
int ghfix_open(lease_store **out, const char *token, int timeout_s, int verify_ms);

/** ghfix_open, failing the test (with the open's message) when it fails. */
void ghfix_open_ok(lease_store **out, const char *token, int timeout_s, int verify_ms);

/**
 * ghfix_start(@p o) into *@p fk, then ghfix_open_ok() into *@p st with
 * @p token, @p timeout_s and @p verify_ms.
 */
void ghfix_begin(fakegh **fk, lease_store **st, const fakegh_options *o, const char *token,
                 int timeout_s, int verify_ms);

/** Free *@p st and stop *@p fk (either may be NULL), both set to NULL. */
void ghfix_end(fakegh **fk, lease_store **st);

/**
 * The lease @p name as the fake @p f's repository holds it, behind the
 * library's back: 1 with its oid in *@p oid, 0 when absent.
 */
int ghfix_tip(fakegh *f, const char *name, lease_oid *oid);

#endif
