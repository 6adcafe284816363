/* Steady polling of one ref for a waiter (protocol.md §5 "Waiting"): the
 * wait_change of the github and remote transports. The pace never grows:
 * a waiter that has waited long is as quick to notice a release as one that
 * just came. */
#include "backend.h"
#include "util/util.h"

#include <string.h>

int64_t lease__jittered_ms(int64_t ms)
{
	unsigned char b[2] = {0, 0};

	if (lease_random_bytes(NULL, b, sizeof(b)) < 0)
		return ms;
	return ms * 3 / 4 + (int64_t)((double)ms / 2.0 * ((b[0] << 8 | b[1]) / 65536.0));
}

int lease__poll_ref_change(lease_transport *t, const lease_clock *clk, lease_probe *state,
                           lease_probe_fn probe, const char *refname, int known_present,
                           const lease_oid *known_oid, int timeout_ms, int interval_ms)
{
	int64_t end = lease__env_mono_ms(clk) + (timeout_ms > 0 ? timeout_ms : 0);

	for (;;) {
		int64_t now = lease__env_mono_ms(clk),
		        nap = lease__jittered_ms(interval_ms > 0 ? interval_ms : 1000);

		if (now + nap >= end) {
			/* No probe at the deadline: the caller reads anyway. */
			return lease__env_sleep_ms(clk, end - now, LEASE_SLEEP_INTERRUPTIBLE) < 0
			               ? 1
			               : 0;
		}
		if (lease__env_sleep_ms(clk, nap, LEASE_SLEEP_INTERRUPTIBLE) < 0)
			return 1; /* a signal: let the caller look at it */
		state->not_modified = 0;
		if (probe(t, refname, state) < 0)
			continue; /* not a change; the caller's own read reports errors */
		if (state->present != (known_present != 0) ||
		    (state->present && !lease_oid_equal(&state->oid, known_oid)))
			return 1;
	}
}
