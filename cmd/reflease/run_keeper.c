/* `run`'s glue to the heartbeat service (lib/lease/heartbeat.c,
 * protocol.md §6): a second thread runs lease_keep()/lease_keep_set() on the
 * store handle; its reports move the lost deadline the main thread watches
 * (run_supervise.c) and mark the lease lost. */
#define _GNU_SOURCE
#include "run.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Store time has whole seconds: a reading of `now` may be up to 1 s behind,
 * so the watchdog's deadline is taken that much earlier (never later). */
#define STORE_TIME_SLACK 1.0

static void notify(run_shared *sh)
{
	char b = 'x';
	ssize_t n = write(sh->ev_w, &b, 1);
	(void)n; /* a full pipe already carries a wake-up */
}

/* Set the deadlines from a report at store time @p now, for a lease of
 * @p ttl seconds (under mu). */
void run_set_deadline(run_shared *sh, double lost_at, int64_t now, int64_t ttl, int only_earlier)
{
	double d = run_clock() + (lost_at - (double)now) - STORE_TIME_SLACK;

	if (only_earlier && d >= sh->deadline)
		return;
	sh->deadline = d;
	sh->lost_at = lost_at;
	sh->grace = lease_kill_grace(ttl);
	sh->changed = 1;
}

void run_keeper_report(const lease_keep_report *rep, void *payload)
{
	run_shared *sh = payload;

	pthread_mutex_lock(&sh->mu);
	sh->last = *rep->result;
	sh->has_last = 1;
	sh->last_event = (int)rep->event;
	switch (rep->event) {
	case LEASE_KEEP_WRITE:
		/* only a write moves the deadline later: a `not_due` answer (after
		 * the wall clock stepped back, say) keeps the one the last write
		 * set on CLOCK_BOOTTIME — other hosts judge by the real time */
		run_set_deadline(sh, rep->lost_at, rep->now, rep->ttl_seconds,
		                 rep->result->status != LEASE_STATUS_RENEWED);
		break;
	case LEASE_KEEP_RETRY:
		/* a failed heartbeat may show an earlier stored expiry (§6) */
		run_set_deadline(sh, rep->lost_at, rep->now, rep->ttl_seconds, 1);
		if (sh->verbosity >= LEASE_LOG_WARN)
			fprintf(stderr,
			        "reflease run: %s: heartbeat failed (%s: %s); retrying in %.0f s, "
			        "lost in %.0f s\n",
			        sh->name, lease_error_id(rep->code), rep->result->message,
			        rep->next_in, rep->lost_at - (double)rep->now);
		break;
	case LEASE_KEEP_CHANGED:
		/* someone with the token (CMD itself) stored an earlier expiry:
		 * the deadline is min(own write, stored expiry) (§6) */
		run_set_deadline(sh, rep->lost_at, rep->now, rep->ttl_seconds, 1);
		if (sh->verbosity >= LEASE_LOG_INFO)
			cli_keep_changed_note("run", sh->name, rep);
		break;
	case LEASE_KEEP_LOST:
	case LEASE_KEEP_FAILED:
		sh->lost = 1;
		sh->lost_event = (int)rep->event;
		sh->lost_code = rep->code;
		break;
	}
	pthread_mutex_unlock(&sh->mu);
	notify(sh);
}

/* The service's sleep: wait on the stop pipe, so a stop is seen at once. */
int run_keeper_sleep(double seconds, void *payload)
{
	run_shared *sh = payload;
	struct pollfd p = {sh->stop_r, POLLIN, 0};
	int ms = seconds > 3600 ? 3600000 : (int)(seconds * 1000.0);

	return poll(&p, 1, ms) > 0;
}

void *run_keeper_main(void *arg)
{
	keeper_args *k = arg;
	lease_result last;
	int rc = k->rn->n == 1 ? lease_keep(&last, k->st, k->rn->names[0], &k->keep)
	                       : lease_keep_set(&last, k->st, k->rn->names, k->rn->n, &k->keep);

	pthread_mutex_lock(&k->sh->mu);
	k->sh->done = 1;
	if (rc < 0 && !k->sh->lost) {
		/* bad options: treat as a permanent failure */
		k->sh->lost = 1;
		k->sh->lost_event = LEASE_KEEP_FAILED;
		k->sh->lost_code = rc;
		k->sh->last = last;
		k->sh->has_last = 1;
	}
	pthread_mutex_unlock(&k->sh->mu);
	notify(k->sh);
	return NULL;
}

/* Wait up to @p seconds for the heartbeat thread to finish; 1 when it has. */
int run_wait_done(run_shared *sh, int evfd, double seconds)
{
	double end = run_clock() + seconds;
	int done;

	for (;;) {
		struct pollfd p = {evfd, POLLIN, 0};
		double left;
		char buf[64];

		pthread_mutex_lock(&sh->mu);
		done = sh->done;
		pthread_mutex_unlock(&sh->mu);
		left = end - run_clock();
		if (done || left <= 0)
			return done;
		if (poll(&p, 1, (int)(left * 1000.0) + 1) > 0)
			while (read(evfd, buf, sizeof(buf)) > 0)
				;
	}
}
