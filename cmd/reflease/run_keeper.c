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
		sh->writes++;
		sh->may_live = rep->result->holds_token;
		/* only a write moves the deadline later: a `not_due` answer (after
		 * the wall clock stepped back, say) keeps the one the last write
		 * set on CLOCK_BOOTTIME — other hosts judge by the real time */
		run_set_deadline(sh, rep->lost_at, rep->now, rep->ttl_seconds,
		                 rep->result->status != LEASE_STATUS_RENEWED);
		break;
	case LEASE_KEEP_RETRY:
		sh->may_live = 0;
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
		/* the service's own lost deadline (it says expired; the
		 * watchdog's deadline, 1 s earlier, has passed): as the
		 * watchdog's firing; any other loss: not ours any more */
		if (rep->event == LEASE_KEEP_LOST && rep->code == LEASE_EEXPIRED &&
		    rep->result->status == LEASE_STATUS_EXPIRED && run_clock() >= sh->deadline)
			run_keeper_fired(sh, run_clock(), 2);
		else
			sh->may_live = 0;
		sh->lost = 1;
		sh->lost_event = (int)rep->event;
		sh->lost_code = rep->code;
		break;
	}
	pthread_mutex_unlock(&sh->mu);
	notify(sh);
}

/* The service's sleep: wait on the stop pipe, so a stop is seen at once.
 * Notes when the next store call is due and when it went out (the sleep
 * ended): the watchdog's cause (run_keeper_cause). */
int run_keeper_sleep(double seconds, void *payload)
{
	run_shared *sh = payload;
	struct pollfd p = {sh->stop_r, POLLIN, 0};
	int ms = seconds > 3600 ? 3600000 : (int)(seconds * 1000.0);
	int stop;

	pthread_mutex_lock(&sh->mu);
	sh->due_at = run_clock() + seconds;
	sh->sent_at = 0;
	pthread_mutex_unlock(&sh->mu);
	stop = poll(&p, 1, ms) > 0;
	pthread_mutex_lock(&sh->mu);
	sh->sent_at = run_clock();
	pthread_mutex_unlock(&sh->mu);
	return stop;
}

/* A call sent this much after it was due, or a watchdog this late, is a
 * scheduling delay, not the store's. */
#define LATE_S 1.0

void run_keeper_fired(run_shared *sh, double now, int how)
{
	if (sh->fired)
		return;
	sh->fired = how;
	sh->fired_at = now;
	sh->fired_dl = sh->deadline;
	sh->fired_due = sh->due_at;
	sh->fired_sent = sh->sent_at;
	sh->fired_writes = sh->writes;
}

void run_keeper_cause(run_shared *sh, char *buf, size_t len)
{
	double at, dl, due, sent, late;
	int how;
	char wd[128] = "", when[64];

	pthread_mutex_lock(&sh->mu);
	how = sh->fired;
	at = sh->fired_at;
	dl = sh->fired_dl;
	due = sh->fired_due;
	sent = sh->fired_sent;
	if (sh->has_last && sh->last_event == LEASE_KEEP_RETRY && sh->last.message[0]) {
		snprintf(buf, len, "the last heartbeat failed (%s): %.400s",
		         lease_error_id(sh->last.code), sh->last.message);
		pthread_mutex_unlock(&sh->mu);
		return;
	}
	pthread_mutex_unlock(&sh->mu);
	if (at - dl > LATE_S)
		snprintf(wd, sizeof(wd), "; the deadline was noticed %.1f s after it passed",
		         at - dl);
	late = (sent > 0 ? sent : at) - due;
	if (how == 1 && sent > 0)
		snprintf(when, sizeof(when), "sent %.1f s late", late);
	else
		snprintf(when, sizeof(when), "not sent in time");
	if (due > 0 && late > LATE_S)
		snprintf(buf, len,
		         "a scheduling delay: the heartbeat due %.1f s before the deadline passed "
		         "was %s (this process did not run in time: a loaded machine, a stopped "
		         "or swapped-out process, a suspend)%s",
		         at - due, when, wd);
	else if (sent > 0 && (how == 1 || at - sent > LATE_S))
		snprintf(buf, len,
		         "the heartbeat in flight got no answer in %.1f s (a store that does not "
		         "answer, a ref lock held)%s",
		         at - sent, wd);
	else if (*wd)
		snprintf(buf, len, "a scheduling delay%s (a loaded machine, a stopped process)",
		         wd);
	else
		snprintf(buf, len,
		         "the lost deadline came before the next heartbeat was due (the clock "
		         "stepped forward, a resume)");
}

int run_keeper_may_hold(run_shared *sh)
{
	int r = 0;

	pthread_mutex_lock(&sh->mu);
	if (sh->fired && sh->may_live)
		r = sh->writes > sh->fired_writes ? 2 : 1;
	pthread_mutex_unlock(&sh->mu);
	return r;
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
