/*
 * `run`'s fence around CMD's process tree (protocol.md §6 "The run
 * guarantee"): a guard process, child subreaper of the whole tree, that kills
 * the tree by walking /proc (not by process group: members may setsid), on
 * request, on its own watchdog deadline, and when reflease itself dies.
 */
#ifndef REFLEASE_RUN_GUARD_H
#define REFLEASE_RUN_GUARD_H

#include <signal.h>
#include <sys/types.h>

#include "util/clock.h"

/* Called by the guard once the tree is gone after reflease died (SIGKILL,
 * the OOM killer), with the token last given (run_guard_token): release the
 * lease with it (CAS, validated; a token that is no longer current writes
 * nothing), so waiters need not wait a TTL (issue 23). Runs in the guard
 * process, which was forked single-threaded: it must open its own store. */
typedef void (*run_guard_release_fn)(const char *token, void *payload);

/* The guard as seen by reflease (the parent). */
typedef struct run_guard {
	pid_t pid;     /* the guard process */
	int ctl_w;     /* reflease → guard (EOF = reflease died) */
	int ev_r;      /* guard → reflease (EOF = guard died) */
	int eof;       /* ev_r reached EOF */
	pid_t cmd_pid; /* CMD (also its process group), once reported stopped */
	int started;   /* run_guard_go() was sent */
} run_guard;

/* What the guard reports (run_guard_read). */
enum {
	RUN_GUARD_NONE = 0,
	RUN_GUARD_CMD_EXITED, /* CMD (the direct child) ended; status as waitpid(2) */
	RUN_GUARD_TREE_GONE,  /* CMD ended and no process of its tree is left; the guard exits */
	RUN_GUARD_EOF,        /* the guard is gone (it died without TREE_GONE) */
	RUN_GUARD_CMD_STOPPED /* CMD was stopped by SIGTSTP/SIGTTIN/SIGTTOU (Ctrl-Z); status =
	                         the signal; run_guard.cmd_pid is set */
};

/* Seconds on CLOCK_BOOTTIME (counts a suspend, unlike CLOCK_MONOTONIC;
 * never steps). Every deadline of run and the guard is on this clock; the
 * library's one clock helper (lib/util/clock.h) reads it. */
static inline double run_clock(void)
{
	return lease__clock_seconds(LEASE_CLOCK_BOOTTIME);
}

/* The catchable signals whose default action ends a process, minus the
 * synchronous fault signals (SEGV, BUS, FPE, ILL, TRAP, SYS): HUP INT QUIT
 * ABRT USR1 USR2 PIPE ALRM TERM STKFLT XCPU XFSZ VTALRM PROF POLL PWR and the
 * real-time signals. Fills @p set. */
void run_terminating_signals(sigset_t *set);

/* Called when run_guard_go() arrives, in the guard and in CMD's process
 * before it execs CMD: @p env holds "NAME=VALUE" strings, each
 * NUL-terminated, @p len bytes in all, as given to run_guard_go(); the
 * callback puts them in the process's environment (CMD's exec inherits it)
 * and fixes up what the guard's release after reflease's death needs (a
 * slot's name). */
typedef void (*run_guard_go_fn)(const char *env, size_t len, void *payload);

/*
 * Fork the guard before the lease is taken (issue 43: the fork is not on the
 * handoff's path); it waits for run_guard_go(), or exits when reflease does
 * (its control pipe reaches EOF) or calls run_guard_cancel(). The caller must
 * be single-threaded and a child subreaper itself (so a tree whose guard was
 * SIGKILLed re-parents to it); the guard keeps every signal of
 * run_terminating_signals() and SIGCHLD blocked (blocked around the fork).
 *
 * The guard forks CMD's process at once (in its own process group, with
 * PR_SET_PDEATHSIG(SIGKILL) on the guard), which execs CMD on
 * run_guard_go() (given the terminal when fg), so that nothing is forked
 * between the acquire and CMD.
 * The guard kills the tree (the signal asked for to every process, then
 * SIGKILL to all after the grace given) when asked (run_guard_kill), when
 * CLOCK_BOOTTIME passes the deadline last set (run_guard_go,
 * run_guard_deadline; 0 = none), when reflease dies (SIGTERM, SIGKILL after
 * @p kill_grace), and once CMD has ended, to whatever CMD left running
 * (SIGTERM, SIGKILL after @p leftover_grace). It reports CMD's status, then
 * TREE_GONE once the whole tree has been reaped, and exits; when reflease
 * died, it first calls @p release (may be NULL) with the token last given.
 * @p go (may be NULL) runs in the guard at run_guard_go().
 * @return 0, or -1 with errno set (nothing forked).
 */
int run_guard_prepare(run_guard *g, char **cmd, double kill_grace, double leftover_grace,
                      run_guard_release_fn release, void *release_payload, run_guard_go_fn go,
                      void *go_payload);

/* Start CMD in the prepared guard: @p fg (give CMD's group the terminal),
 * the watchdog @p deadline (run_clock() seconds; 0 = none), the lease's
 * @p token (for the release after reflease's death) and @p env (@p len
 * bytes of NUL-terminated "NAME=VALUE" strings, handed to the go callback).
 * @return 0, or -1 with errno set (the guard is gone: EPIPE). */
int run_guard_go(run_guard *g, int fg, double deadline, const char *token, const char *env,
                 size_t len);

/* A prepared guard that never got run_guard_go(): it exits, and is reaped.
 * Nothing (no-op) for a guard that was started or never prepared. */
void run_guard_cancel(run_guard *g);

/* Give the guard the token now held (after a handoff rotation), for the
 * release after reflease's death. */
void run_guard_token(run_guard *g, const char *token);

/* Set the guard's watchdog deadline (run_clock() seconds; 0 = none) and the
 * kill_grace of the TTL behind it (seconds; 0 = unchanged): a grace shorter
 * than the guard's replaces it, for the watchdog and for reflease's death
 * (after CMD shortened the lease the tree must be gone by its expiry, §6). */
void run_guard_deadline(run_guard *g, double deadline, double grace);

/* SIGCONT to every process of the tree (after a job-control stop). */
void run_guard_resume(run_guard *g);

/* Send @p sig to every process of the tree now, SIGKILL to all that are left
 * @p grace seconds later (the earliest such time asked for wins). */
void run_guard_kill(run_guard *g, int sig, double grace);

/* Read one report without blocking: RUN_GUARD_NONE when nothing is pending;
 * *status receives CMD's status with RUN_GUARD_CMD_EXITED. */
int run_guard_read(run_guard *g, int *status);

/*
 * Stop every descendant of the calling process (a subreaper whose guard has
 * died): @p sig (and SIGCONT) to each, SIGKILL to every one left after
 * @p grace seconds, reaping as they end; returns when none is left. The
 * exit status of any child @p watch (0 = none) that is reaped goes to
 * *watch_status.
 */
void run_tree_stop(int sig, double grace, pid_t watch, int *watch_status);

/* The fair waiter's ticket guard of run --fair and acquire --wait --fair
 * (run_ticket_guard.c, issue 40 Q1). */
typedef struct run_ticket_guard {
	pid_t pid; /* -1: none */
} run_ticket_guard;

struct cli_ctx;

/*
 * Before the store is opened: fork the process that removes this waiter's
 * tickets of lease @p name (by CAS, only ids this process drew) if this
 * process dies while it waits, and route the store's randomness
 * (ctx->random) through it. 0, or -1 with errno (nothing started).
 */
int run_ticket_guard_start(run_ticket_guard *tg, struct cli_ctx *ctx, const char *name);

/* The wait is over (acquired, gave up, interrupted: the runtime removed the
 * ticket itself): tell the guard it is done and reap it. */
void run_ticket_guard_stop(run_ticket_guard *tg, struct cli_ctx *ctx);

#endif
