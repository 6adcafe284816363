/* `run`'s supervisor (protocol.md §6 "The run guarantee"): the main thread
 * owns the guard (run_guard.c) and every signal, read through a signalfd;
 * it waits until CMD's whole tree is gone, forwarding signals, following
 * job control and killing the tree at the lost deadline (the watchdog). */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* Longest sleep of the main thread, ms: the wall clock (a step, a resume)
 * is looked at this often. */
#define RUN_TICK_MS 200
/* When the tree is not gone this long after its SIGKILL was due, reflease
 * kills its whole subtree itself, the guard included (a stopped guard). */
#define RUN_GUARD_SLACK 1.0

/* ---- signals ---- */

double run_signal_grace(double kill_grace)
{
	return kill_grace < RUN_SIGNAL_KILL_MAX ? kill_grace : RUN_SIGNAL_KILL_MAX;
}

/* The signals run handles: every catchable terminating one, and SIGCHLD. */
static void run_signal_set(sigset_t *set)
{
	run_terminating_signals(set);
	sigaddset(set, SIGCHLD);
}

int run_open_signalfd(void)
{
	sigset_t set;

	run_signal_set(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Read pending signals; returns the first terminating one seen (0 if none)
 * and sets *chld on SIGCHLD. */
int run_drain_signals(int sfd, int *chld)
{
	struct signalfd_siginfo si;
	int sig = 0;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			*chld = 1;
		else if (si.ssi_signo == SIGPIPE && si.ssi_code == SI_USER &&
		         (pid_t)si.ssi_pid == getpid())
			continue; /* our own write to a closed pipe (EPIPE is handled) */
		else if (!sig)
			sig = (int)si.ssi_signo;
	}
	return sig;
}

/* ---- run ---- */

/* Whether /proc shows this process's own PID namespace: /proc/self names
 * getpid(). Not so in a PID namespace that kept the parent's /proc (the
 * process is another pid there, or not visible at all). */
int run_proc_is_ours(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10) == (long)getpid();
}

/* Ask the guard to kill the tree; remember by when it must be gone. */
static void sup_kill(run_sup *s, int sig, double grace)
{
	double at = run_clock() + grace + RUN_GUARD_SLACK;

	run_guard_kill(&s->g, sig, grace);
	if (!s->hard_at || at < s->hard_at)
		s->hard_at = at;
}

/* Reap reflease's own children (the guard, or orphans after its death). */
static void sup_reap(run_sup *s)
{
	pid_t w;
	int st;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0)
		if (w == s->g.pid) {
			s->guard_reaped = 1;
			s->guard_died = 1; /* TREE_GONE, when it came, was read before */
		}
}

/* The watchdog (§6): lost when the service said so, or at the lost deadline
 * on either clock; then the tree gets SIGTERM and SIGKILL after kill_grace,
 * never later than expires_at − 2 s in store time. Passes the deadline on to
 * the guard. Returns the deadline (run_clock()). */
static double check_lost(run_sup *s, run_shared *sh)
{
	double now = run_clock(), deadline, lost_at, kg;
	int lost_now;

	pthread_mutex_lock(&sh->mu);
	deadline = sh->deadline;
	lost_at = sh->lost_at;
	/* the kill_grace of the TTL behind the deadline: CMD's own heartbeat
	 * with a shorter TTL shortens it (the tree is gone by expires_at − 2 s) */
	kg = sh->grace > 0 && sh->grace < s->kill_grace ? sh->grace : s->kill_grace;
	lost_now = sh->lost;
	if (!s->lost && !lost_now &&
	    (now >= deadline ||
	     (s->wall_is_store && lease__clock_seconds(LEASE_CLOCK_REALTIME) >= lost_at)))
		run_keeper_fired(sh, now, 1); /* what the heartbeat thread is doing now */
	if (sh->changed && !s->lost && deadline != s->sent_dl) {
		run_guard_deadline(&s->g, deadline, kg);
		s->sent_dl = deadline;
	}
	sh->changed = 0;
	if (sh->has_last && sh->last.has_payload && sh->last.holds_token &&
	    sh->last.payload.lease_token[0] &&
	    strcmp(sh->last.payload.lease_token, s->sent_token) != 0) {
		/* a handoff rotated it: the guard releases with the current one */
		memcpy(s->sent_token, sh->last.payload.lease_token, sizeof(s->sent_token));
		run_guard_token(&s->g, s->sent_token);
	}
	pthread_mutex_unlock(&sh->mu);
	if (!s->lost &&
	    (lost_now || now >= deadline ||
	     (s->wall_is_store && lease__clock_seconds(LEASE_CLOCK_REALTIME) >= lost_at))) {
		double grace = kg;
		if (s->wall_is_store &&
		    lost_at + kg - lease__clock_seconds(LEASE_CLOCK_REALTIME) < grace)
			grace = lost_at + kg - lease__clock_seconds(LEASE_CLOCK_REALTIME);
		s->lost = 1;
		run_guard_deadline(&s->g, 0, 0);
		sup_kill(s, SIGTERM, grace < 0 ? 0 : grace);
	}
	return deadline;
}

/* CMD was stopped by job control (Ctrl-Z: SIGTSTP; SIGTTIN, SIGTTOU): stop
 * reflease too, as sudo does, so that the shell sees its job stopped and
 * gives the prompt back; the terminal goes back to reflease's group first.
 * While stopped nothing renews the lease (protocol.md §6): the guard's
 * watchdog still runs and stops the tree at the lost deadline; on SIGCONT
 * (fg, bg) CMD's tree is continued, and given the terminal when reflease has
 * it (fg). */
static void stop_with_cmd(run_sup *s)
{
	if (s->fg)
		tcsetpgrp(STDIN_FILENO, getpgrp());
	kill(getpid(), SIGSTOP); /* returns once continued */
	if (s->fg && s->g.cmd_pid > 0 && tcgetpgrp(STDIN_FILENO) == getpgrp())
		tcsetpgrp(STDIN_FILENO, s->g.cmd_pid);
	run_guard_resume(&s->g);
}

/* Supervise until CMD's whole tree is gone: signals, the guard's reports,
 * the heartbeat service's reports and the watchdog. */
void run_supervise(run_sup *s, run_shared *sh, int sfd, int evfd)
{
	for (;;) {
		struct pollfd fds[3] = {
		        {sfd, POLLIN, 0}, {evfd, POLLIN, 0}, {s->g.ev_r, POLLIN, 0}};
		double now = run_clock(), deadline = check_lost(s, sh);
		int chld = 0, sig, ms = RUN_TICK_MS, ev, st = 0, gone = 0;

		if (s->hard_at && now >= s->hard_at) {
			/* the guard did not finish in time (stopped?): kill the
			 * whole subtree from here, the guard included */
			run_tree_stop(SIGKILL, 0, s->g.pid, &st);
			s->guard_reaped = 1;
			if (!s->have_cmd) {
				s->have_cmd = 1;
				s->cmd_status = SIGKILL;
			}
			return;
		}
		if (!s->lost && (deadline - now) * 1000.0 < ms)
			ms = (int)((deadline - now) * 1000.0) + 1;
		if (s->hard_at && (s->hard_at - now) * 1000.0 < ms)
			ms = (int)((s->hard_at - now) * 1000.0) + 1;
		if (poll(fds, 3, ms < 0 ? 0 : ms) < 0 && errno != EINTR)
			ms = 0;
		if (fds[1].revents & POLLIN) {
			char buf[64];
			while (read(evfd, buf, sizeof(buf)) > 0)
				;
		}
		sig = run_drain_signals(sfd, &chld);
		if (sig) {
			/* forwarded to every process of the tree; SIGKILL after
			 * min(kill_grace, 3 s), then release (cli.md: within 5 s) */
			sup_kill(s, sig, run_signal_grace(s->kill_grace));
			if (!s->interrupted)
				s->interrupted = sig;
		}
		while ((ev = run_guard_read(&s->g, &st)) != RUN_GUARD_NONE) {
			if (ev == RUN_GUARD_CMD_EXITED) {
				s->have_cmd = 1;
				s->cmd_status = st;
			} else if (ev == RUN_GUARD_TREE_GONE) {
				gone = 1;
			} else if (ev == RUN_GUARD_CMD_STOPPED) {
				if (!s->lost && !s->interrupted && !s->hard_at)
					stop_with_cmd(s);
			} else {
				break; /* EOF */
			}
		}
		if (gone) {
			/* a deadline passed while reflease was stopped counts */
			check_lost(s, sh);
			return;
		}
		if (chld)
			sup_reap(s);
		if (s->g.eof || s->guard_died) {
			/* The guard died (SIGKILL): CMD died with it (PDEATHSIG), the
			 * rest of the tree re-parented here. Kill it from here. */
			s->guard_died = 1;
			fprintf(stderr,
			        "reflease run: the guard process died; stopping CMD's tree\n");
			run_tree_stop(SIGTERM, s->kill_grace, s->g.pid, &st);
			s->guard_reaped = 1;
			if (!s->have_cmd) {
				s->have_cmd = 1;
				s->cmd_status = SIGKILL;
			}
			return;
		}
	}
}
