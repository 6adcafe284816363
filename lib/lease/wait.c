/* The progress report every wait of an acquire shares (lease/wait.h,
 * protocol.md §5 "Waiting", issue 38). */
#include "lease/wait.h"
#include "store/frontend.h"

#include <string.h>

void lease__waiter_begin(lease_waiter *w, lease_store *st, const lease_op_options *o)
{
	memset(w, 0, sizeof(*w));
	w->st = st;
	w->o = o;
	w->start_ms = lease__store_mono_ms(st);
}

double lease__waiter_report(lease_waiter *w, const lease_result *holder, int64_t queue_position,
                            double wait_s, int *capped)
{
	int64_t now = lease__store_mono_ms(w->st);
	double to_next;

	if (capped)
		*capped = 0;
	if (!w->o || !w->o->progress_cb)
		return wait_s;
	if (now >= w->next_ms) {
		lease_wait_progress p;
		int pay = holder && holder->has_payload;

		memset(&p, 0, sizeof(p));
		p.name = holder ? holder->name : "";
		p.owner = pay ? holder->payload.owner : "";
		p.host = pay ? holder->payload.host : "";
		p.until = pay ? holder->payload.expires_at : 0;
		p.queue_position = queue_position;
		p.waited_seconds = (double)(now - w->start_ms) / 1000.0;
		w->o->progress_cb(&p, w->o->progress_payload);
		w->next_ms = now + (int64_t)LEASE_WAIT_REPORT_S * 1000;
	}
	to_next = (double)(w->next_ms - now) / 1000.0;
	if (to_next < wait_s) {
		if (capped)
			*capped = 1;
		return to_next;
	}
	return wait_s;
}
