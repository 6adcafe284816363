/**
 * @file passthru.h
 * A pass-through transport for fault tests: each call goes to an inner
 * transport until the test overrides it. A test embeds a passthru first in
 * its own struct and replaces the calls it faults:
 *
 *     typedef struct late { passthru p; int armed; } late;
 *     late *l = calloc(1, sizeof(*l));
 *     passthru_init(&l->p, inner);         // l->p.inner: the inner transport
 *     l->p.base.replace_ref = late_replace; // casts its t back to late *
 *     lease_store_open_transport(&st, &l->p.base, &so, err, sizeof(err));
 */
#ifndef REFLEASE_TEST_PASSTHRU_H
#define REFLEASE_TEST_PASSTHRU_H

#include "reflease/sys/transport.h"

/** A transport (base, first) over an inner one. */
typedef struct passthru {
	lease_transport base;   /**< what the store is opened over; first member */
	lease_transport *inner; /**< the transport every call goes to (owned) */
} passthru;

/**
 * Set @p p up over @p inner: base becomes a copy of *@p inner whose required
 * calls and last_error pass through to @p inner, and whose optional calls
 * (now, lock files, pace, wait_change, scan_commits, set_lock_wait,
 * read_ref_oid, cas_many, list_refs_each, read_refs) are NULL: a copied one would be the inner
 * transport's, called with the wrapper (transport.h), so a ref is read
 * through base.read_ref alone. Takes ownership of @p inner: base.free frees
 * it, then free()s @p p, which must therefore begin a malloc'd block (the
 * test's struct, with the passthru as its first member). Cannot fail.
 */
void passthru_init(passthru *p, lease_transport *inner);

#endif
