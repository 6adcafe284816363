/**
 * @file handle.h (internal)
 * The store handle's layout. Who may include it (issue 26 item 1, `make lint`
 * checks the #include lines): lib/store/store.c, which builds the handle, and
 * lib/lease/primitives.c, the one door to the transport (issue 17) — nowhere
 * else in lib/ or cmd/ (tests may). The rest of lib/lease uses
 * store/frontend.h; the transports use store/backend.h.
 */
#ifndef REFLEASE_STORE_HANDLE_H
#define REFLEASE_STORE_HANDLE_H

#include "reflease/schema.h" /* LEASE_NS_MAX */
#include "reflease/store.h"
#include "reflease/sys/transport.h"

#include "frontend.h"

/** The store handle (opaque to users of reflease/store.h). */
struct lease_store {
	lease_transport *t;
	char ns[LEASE_NS_MAX + 1];
	lease_clock clock;
	lease_random random;
	int verify_timeout_ms;
	int timeout_s;
	lease_log_fn log;
	void *log_payload;
	int log_level;
	char spec[1024];
	char errmsg[LEASE_STORE_ERRMSG_SZ]; /**< the first error since the call began */
	lease_cas_error cas_err;
	int cas_compared;    /**< a post-state was read for cas_err (primitives.c observe()) */
	int64_t paced_ms;    /**< total waited by lease__store_pace() */
	int op_depth;        /**< lease__store_op_begin() nesting */
	int64_t wait_end_ms; /**< lease__store_set_wait_end(): monotonic ms, 0 = none */
};

#endif
