/*
 * `run`'s parts (cmd_run.c: the command; run_supervise.c: CMD's process
 * tree and the signals; run_keeper.c: the heartbeat service's glue;
 * run_output.c: the run object) and what they share. The guarantee they
 * keep together is described in cmd_run.c (protocol.md §6 "The run
 * guarantee").
 */
#ifndef REFLEASE_RUN_H
#define REFLEASE_RUN_H

#include "cmd_lease.h"
#include "run_guard.h"

#include <pthread.h>

/* Longest wait between a forwarded signal and SIGKILL, seconds, so that the
 * release happens within 5 s of the signal (cli.md). */
#define RUN_SIGNAL_KILL_MAX 3.0

/* The names a run holds: one lease, or a set (protocol.md "Sets"). */
typedef struct run_names {
	const char *names[LEASE_SET_MAX];
	size_t n;
	lease_set_result *set; /* n > 1: the set's latest answer (owned) */
	char label[LEASE_SET_MAX * (LEASE_NAME_MAX + 1) + 1]; /* "A B C", for messages */
} run_names;

/* State shared with the heartbeat thread (under mu). */
typedef struct run_shared {
	pthread_mutex_t mu;
	int ev_w;          /* event pipe, write end (thread → main) */
	int stop_r;        /* stop pipe, read end (main → thread) */
	int lost;          /* the service reported LOST or FAILED */
	int lost_event;    /* LEASE_KEEP_LOST or LEASE_KEEP_FAILED */
	int lost_code;     /* its code */
	lease_result last; /* the service's latest result */
	int has_last;
	int last_event;  /* the event of `last` (lease_keep_event) */
	double deadline; /* the lost deadline on run_clock() (CLOCK_BOOTTIME), s */
	double lost_at;  /* the lost deadline in store time, s since the epoch */
	double grace;    /* kill_grace of the TTL behind lost_at, s (a shorter TTL
	                    written under run shortens it: the tree must be gone by
	                    expires_at − 2 s, protocol.md §6) */
	int changed;     /* deadline changed since the main thread looked */
	int done;        /* the service returned */
	/* What the heartbeat thread was doing (run_keeper_sleep), on run_clock(), s: */
	double due_at;  /* its next store call is due (the end of its sleep); 0 = none yet */
	double sent_at; /* a store call is in flight since (its sleep ended); 0 = none */
	int writes;     /* heartbeats that landed (LEASE_KEEP_WRITE reports) */
	int may_live;   /* the last answer was a landed write with run's token (no
	                   failure or loss since, but the lost deadline's) */
	/* ...and at the moment the watchdog fired on the lost deadline (B67: the
	 * loss message names the cause; a heartbeat landing later is released) */
	int fired;         /* the deadline passed: the watchdog fired, or the
	                      service reported its own lost deadline (1 / 2) */
	double fired_at;   /* when it looked and found the deadline passed */
	double fired_dl;   /* the deadline it found passed */
	double fired_due;  /* due_at then */
	double fired_sent; /* sent_at then */
	int fired_writes;  /* writes then */
	int verbosity;
	const char *name;
} run_shared;

typedef struct keeper_args {
	lease_store *st;
	const run_names *rn;
	lease_keep_options keep;
	lease_oid at; /* the acquire's oid (keep.known_oid) */
	run_shared *sh;
} keeper_args;

typedef struct run_out {
	cli_ctx *ctx;
	int json;
	const char *json_file;
	int json_fd; /* --json-file, opened before anything is acquired; -1 = none */
} run_out;

/* The supervision of one run: the guard, and how it all ended. */
typedef struct run_sup {
	run_guard g;
	double kill_grace;
	int wall_is_store; /* the store's time is this host's wall clock */
	int fg;            /* reflease had the terminal's foreground (CMD was given it) */
	int lost;          /* the lease is (or may be) lost */
	int interrupted;   /* the first terminating signal received */
	int have_cmd;      /* CMD's status is known */
	int cmd_status;    /* as waitpid(2) */
	int guard_died;    /* the guard ended without reporting the tree gone */
	int guard_reaped;  /* waitpid has collected the guard */
	double hard_at;    /* the tree must be gone by then (run_clock), 0 = no limit */
	double sent_dl;    /* the deadline the guard was last given */
	char sent_token[LEASE_TOKEN_HEXSZ + 1]; /* the token the guard was last given */
} run_sup;

/* ---- the heartbeat service's glue (run_keeper.c) ---- */

/* Set the deadlines from a report at store time @p now, for a lease of
 * @p ttl seconds (under mu). */
void run_set_deadline(run_shared *sh, double lost_at, int64_t now, int64_t ttl, int only_earlier);
/* lease_keep_options.report: the service's reports into the shared state. */
void run_keeper_report(const lease_keep_report *rep, void *payload);
/* The service's sleep: wait on the stop pipe, so a stop is seen at once. */
int run_keeper_sleep(double seconds, void *payload);
/* The heartbeat thread: lease_keep() (one lease) or lease_keep_set() (a set). */
void *run_keeper_main(void *arg);
/* Wait up to @p seconds for the heartbeat thread to finish; 1 when it has. */
int run_wait_done(run_shared *sh, int evfd, double seconds);

/**
 * Note that the lost deadline passed at run_clock() @p now (@p how: 1 the
 * watchdog, 2 the service's own report): what the heartbeat thread was doing
 * then, for run_keeper_cause() and run_keeper_may_hold(). Only the first
 * call counts. Call under @p sh's mutex.
 */
void run_keeper_fired(run_shared *sh, double now, int how);

/**
 * Why the watchdog fired on the lost deadline with no loss reported (issue 40
 * B67, protocol.md §6 "Lost lease"), from what the heartbeat thread was doing
 * at that moment (run_shared.fired_*): the last heartbeat's failure; a
 * scheduling delay (the call due was sent late or never, or the watchdog
 * itself woke late: a loaded machine, a stopped or swapped-out process, a
 * suspend); or a store call in flight that got no answer (a silent store, a
 * ref lock held). Writes a NUL-terminated phrase of at most @p len bytes into
 * @p buf (caller's). Call under no lock; reads @p sh under its mutex.
 */
void run_keeper_cause(run_shared *sh, char *buf, size_t len);

/**
 * After the watchdog fired on the lost deadline and CMD's tree is gone: 0
 * when the lease is not live with run's token as far as the heartbeat thread
 * knows (its last answer a failure, a loss, or none); 1 when its last answer
 * was a write that landed before the watchdog fired (the lease is live until
 * its expires_at: the lost deadline's margin); 2 when a heartbeat landed after
 * it (renewed, although run gave up). In both cases the lease is live with a
 * token nobody holds, so run releases it (issue 40 B67). Call after the
 * heartbeat thread ended.
 */
int run_keeper_may_hold(run_shared *sh);

/* ---- the run object (run_output.c) ---- */

/* --json-file F must be writable before the lease is taken (F08): open it
 * now (created empty when missing, kept otherwise). */
int run_open_json_file(cli_ctx *ctx, const char *path, int *fd);
/* The run object: the last lease result (a set's answer for a set) plus how
 * CMD and reflease ended. */
void run_emit(const run_out *o, lease_store *st, lease_result *r, const run_names *rn, int rc,
              const char *reason, int exit_status, int have_cmd, int cmd_status);

/* ---- CMD's process tree and the signals (run_supervise.c) ---- */

/* How long a signal forwarded to CMD's tree (and what CMD leaves behind
 * once it ended) gets before SIGKILL: min(kill_grace, RUN_SIGNAL_KILL_MAX),
 * seconds, so that the release follows within 5 s (cli.md). */
double run_signal_grace(double kill_grace);
/* Block the signals run handles and open a signalfd for them; -1 on error. */
int run_open_signalfd(void);
/* Read pending signals; returns the first terminating one seen (0 if none)
 * and sets *chld on SIGCHLD. */
int run_drain_signals(int sfd, int *chld);
/* Whether /proc shows this process's own PID namespace: /proc/self names
 * getpid(). Not so in a PID namespace that kept the parent's /proc (the
 * process is another pid there, or not visible at all). */
int run_proc_is_ours(void);
/* Supervise until CMD's whole tree is gone: signals, the guard's reports,
 * the heartbeat service's reports and the watchdog. */
void run_supervise(run_sup *s, run_shared *sh, int sfd, int evfd);

#endif
