/*
 * `run`'s guard (protocol.md §6 "The run guarantee"). Process layout:
 *
 *   reflease run  (child subreaper; heartbeat thread; signals; the lease)
 *     └─ guard    (child subreaper, own process group; kills and reaps the tree)
 *          └─ CMD (own process group, PR_SET_PDEATHSIG(SIGKILL) on the guard)
 *               └─ ... every descendant: orphans re-parent to the guard
 *
 * Whatever CMD's members do with process groups, sessions or double forks,
 * they stay descendants of the guard (the nearest subreaper), so the guard
 * finds them by walking /proc for PPid chains and kills them one by one. The
 * guard outlives reflease: when reflease dies (SIGKILL, the OOM killer), the
 * guard sees its control pipe reach EOF and kills the tree long before the
 * lease's expiry. When the guard dies, CMD dies with it (PDEATHSIG) and the
 * rest of the tree re-parents to reflease, which kills it (run_tree_stop).
 */
#define _GNU_SOURCE
#include "run_guard.h"

#include "cmd_lease.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* How often the tree is re-walked while it is being killed, ms. */
#define KILL_POLL_MS 50
/* The guard's watchdog fires this long after reflease's own (same deadline):
 * a backstop for a stopped or hung reflease, never racing a deadline that a
 * heartbeat has just moved. */
#define GUARD_DEADLINE_LAG 0.5
/* Longest poll of the guard while idle, ms (a suspend does not advance
 * poll's monotonic timeout: wake up to look at CLOCK_BOOTTIME). */
#define IDLE_POLL_MS 250

void run_terminating_signals(sigset_t *set)
{
	static const int sigs[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGABRT,  SIGUSR1, SIGUSR2,
	                           SIGPIPE, SIGALRM, SIGTERM, SIGXCPU,  SIGXFSZ, SIGVTALRM,
	                           SIGPROF, SIGPOLL, SIGPWR,  SIGSTKFLT};
	size_t i;
	int s;

	sigemptyset(set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(set, sigs[i]);
	for (s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaddset(set, s);
}

/* ---- the tree ---- */

typedef struct proc_entry {
	pid_t pid, ppid;
	char state;
} proc_entry;

typedef struct pidset {
	pid_t *v;
	size_t n, cap;
} pidset;

static int pidset_has(const pidset *s, pid_t p)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == p)
			return 1;
	return 0;
}

static void pidset_add(pidset *s, pid_t p)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		pid_t *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return; /* the pid is signalled again on the next walk */
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = p;
}

/* Read "pid (comm) S ppid" from /proc/<pid>/stat (comm may hold spaces and
 * parentheses: the last ')' ends it). */
static int read_stat(pid_t pid, proc_entry *e)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')) || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	e->pid = pid;
	e->state = p[2];
	e->ppid = (pid_t)strtol(p + 4, NULL, 10);
	return 0;
}

/* The descendants of the calling process that have not exited (zombies
 * excluded), by PPid chains over /proc. Returns their number; @p out (may be
 * NULL) receives them with their state. */
static size_t tree_scan(proc_entry **out)
{
	proc_entry *all = NULL, *res = NULL;
	size_t n = 0, cap = 0, nres = 0, i, head = 0;
	pidset queue = {NULL, 0, 0};
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (out)
		*out = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		proc_entry e;
		if (*end || v <= 0 || read_stat((pid_t)v, &e) < 0)
			continue;
		if (n == cap) {
			proc_entry *a = realloc(all, (cap ? cap * 2 : 256) * sizeof(*a));
			if (!a)
				break;
			all = a;
			cap = cap ? cap * 2 : 256;
		}
		all[n++] = e;
	}
	closedir(d);
	if (n && !(res = malloc(n * sizeof(*res)))) {
		free(all);
		return 0;
	}
	pidset_add(&queue, getpid());
	while (head < queue.n) {
		pid_t parent = queue.v[head++];
		for (i = 0; i < n; i++) {
			if (all[i].ppid != parent || pidset_has(&queue, all[i].pid))
				continue;
			pidset_add(&queue, all[i].pid);
			if (all[i].state != 'Z' && all[i].state != 'X')
				res[nres++] = all[i];
		}
	}
	free(queue.v);
	free(all);
	if (out)
		*out = res;
	else
		free(res);
	return nres;
}

/* Killing the tree: @p sig once to every member (new members too), SIGKILL
 * to all at kill_at. */
typedef struct killer {
	int active;
	int sig;
	double kill_at;
	pidset sent;
} killer;

/* One walk: signal whoever is due; returns the number of live members. */
static size_t killer_step(killer *k)
{
	proc_entry *t;
	size_t n = tree_scan(&t), i;
	int all = run_clock() >= k->kill_at;

	for (i = 0; i < n; i++) {
		if (all) {
			kill(t[i].pid, SIGKILL);
		} else if (!pidset_has(&k->sent, t[i].pid)) {
			kill(t[i].pid, k->sig);
			if (t[i].state == 'T' || t[i].state == 't')
				kill(t[i].pid, SIGCONT); /* a stopped member gets it too */
			pidset_add(&k->sent, t[i].pid);
		}
	}
	free(t);
	return n;
}

static void killer_start(killer *k, int sig, double grace)
{
	double at = run_clock() + (grace > 0 ? grace : 0);

	if (!k->active || at < k->kill_at)
		k->kill_at = at;
	if (!k->active || sig != k->sig) {
		k->sig = sig;
		k->sent.n = 0; /* another signal: every member gets it */
	}
	k->active = 1;
	killer_step(k);
}

/* Reap every child that has ended; CMD's status to *status (sets *done).
 * With @p stopped (may be NULL), a job-control stop of CMD (SIGTSTP, SIGTTIN,
 * SIGTTOU: Ctrl-Z, a background read) is reported there (its signal). */
static int reap(pid_t cmd, int *status, int *done, int *stopped)
{
	pid_t w;
	int st, any = 0;

	while ((w = waitpid(-1, &st, WNOHANG | (stopped ? WUNTRACED : 0))) > 0) {
		if (WIFSTOPPED(st)) {
			int sig = WSTOPSIG(st);
			if (w == cmd && (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
				*stopped = sig;
			continue;
		}
		any = 1;
		if (w == cmd) {
			*status = st;
			*done = 1;
		}
	}
	/* -1/ECHILD: no child at all; 0: children left */
	return w < 0 && errno == ECHILD ? -1 : any;
}

/* SIGCONT to every process of the tree (run resumed after a job-control
 * stop: the shell continued reflease's group, not CMD's). */
static void tree_continue(void)
{
	proc_entry *t;
	size_t n = tree_scan(&t), i;

	for (i = 0; i < n; i++)
		kill(t[i].pid, SIGCONT);
	free(t);
}

void run_tree_stop(int sig, double grace, pid_t watch, int *watch_status)
{
	killer k;
	int done = 0;

	memset(&k, 0, sizeof(k));
	killer_start(&k, sig, grace);
	for (;;) {
		int r = reap(watch, watch_status, &done, NULL);
		if (killer_step(&k) == 0 && r < 0)
			break;
		lease__sleep_ms(KILL_POLL_MS, LEASE_SLEEP_INTERRUPTIBLE);
	}
	free(k.sent.v);
}

/* ---- messages (fixed size, written atomically: < PIPE_BUF; a go message
 * is followed by its environment, read whole by read_go) ---- */

typedef struct guard_msg {
	int32_t type; /* to the guard: 'G' go, 'D' deadline, 'K' kill, 'T' token, 'R' resume;
	               * from it: 'C' CMD exited, 'S' CMD stopped, 'E' tree gone */
	int32_t value;
	double d;
	char token[LEASE_TOKEN_HEXSZ + 1]; /* 'G', 'T' */
	uint32_t len;                      /* 'G': bytes of environment that follow */
} guard_msg;

/* Most bytes of environment a go message carries. */
#define GUARD_ENV_MAX (256 * 1024)

static int send_msg_token(int fd, int type, int value, double d, const char *token)
{
	guard_msg m;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.value = value;
	m.d = d;
	if (token)
		snprintf(m.token, sizeof(m.token), "%s", token);
	while ((n = write(fd, &m, sizeof(m))) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof(m) ? 0 : -1;
}

static int send_msg(int fd, int type, int value, double d)
{
	return send_msg_token(fd, type, value, d, NULL);
}

/* ---- CMD ---- */

/* Block SIGTTOU (a process group that is not in the foreground may then
 * still call tcsetpgrp). */
static void block_ttou(void)
{
	sigset_t t;

	sigemptyset(&t);
	sigaddset(&t, SIGTTOU);
	sigprocmask(SIG_BLOCK, &t, NULL);
}

static void child_exec(char **cmd, int fg)
{
	struct sigaction sa;
	sigset_t none, term;
	int e, s;

	sigemptyset(&none);
	if (fg) {
		/* reflease owned the terminal: CMD's group gets it (keyboard
		 * signals and terminal reads go to CMD, as under a shell) */
		block_ttou();
		tcsetpgrp(STDIN_FILENO, getpid());
	}
	/* a signal forwarded before exec acts on CMD, not on our handler; an
	 * ignored signal stays ignored (nohup) */
	cli_default_stop_handlers();
	run_terminating_signals(&term);
	for (s = 1; s < NSIG; s++)
		if (sigismember(&term, s) == 1 && sigaction(s, NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL)
			signal(s, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(cmd[0], cmd);
	e = errno;
	{
		char msg[512];
		int n = snprintf(msg, sizeof(msg), "reflease run: %s: %s\n", cmd[0], strerror(e));
		if (n > 0) {
			ssize_t w = write(STDERR_FILENO, msg,
			                  (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
			(void)w;
		}
	}
	_exit(e == ENOENT ? 127 : 126);
}

/* ---- the guard process ---- */

/* Close every descriptor marked close-on-exec except @p a and @p b: the
 * store's files and sockets (CMD would not inherit them either), so that the
 * guard holds no connection of reflease's open while it outlives it. The
 * descriptors CMD inherits (no FD_CLOEXEC) stay. */
static void close_cloexec_fds(int a, int b)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int fds[1024], n = 0, i;

	if (!d)
		return;
	while ((de = readdir(d)) && n < 1024) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		int fl;
		if (*end || end == de->d_name || fd < 3 || fd == a || fd == b || fd == dirfd(d))
			continue;
		if ((fl = fcntl((int)fd, F_GETFD)) >= 0 && (fl & FD_CLOEXEC))
			fds[n++] = (int)fd;
	}
	closedir(d);
	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* What the guard does once the tree is gone after reflease's death. */
typedef struct guard_release {
	char token[LEASE_TOKEN_HEXSZ + 1];
	run_guard_release_fn fn;
	void *payload;
	run_guard_go_fn go; /* at the go message */
	void *go_payload;
} guard_release;

/* Read @p n bytes from the non-blocking @p fd, waiting for them: 1, or 0 at
 * EOF or on an error (reflease is gone). */
static int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
		} else if (r == 0) {
			return 0;
		} else if (errno == EAGAIN) {
			struct pollfd pf = {fd, POLLIN, 0};
			if (poll(&pf, 1, -1) < 0 && errno != EINTR)
				return 0;
		} else if (errno != EINTR) {
			return 0;
		}
	}
	return 1;
}

/* Read a go message (the header, then m->len bytes of environment into
 * *@p env, malloc'ed, NULL when none) from @p fd: 1, or 0 at EOF, on an
 * error or on a message that is not one. */
static int read_go(int fd, guard_msg *m, char **env)
{
	*env = NULL;
	if (!read_full(fd, m, sizeof(*m)) || m->type != 'G' || m->len > GUARD_ENV_MAX)
		return 0;
	if (m->len > 0 && (!(*env = malloc(m->len)) || !read_full(fd, *env, m->len))) {
		free(*env);
		*env = NULL;
		return 0;
	}
	m->token[sizeof(m->token) - 1] = '\0';
	return 1;
}

/* Write the go message @p m and its m->len bytes of @p env to @p fd: 0, or
 * -1 with errno (EPIPE: the reader is gone). */
static int write_go(int fd, const guard_msg *m, const char *env)
{
	const char *parts[2] = {(const char *)m, env};
	size_t sizes[2] = {sizeof(*m), m->len}, off;
	int i;

	for (i = 0; i < 2; i++) {
		for (off = 0; off < sizes[i];) {
			ssize_t w = write(fd, parts[i] + off, sizes[i] - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				if (w == 0)
					errno = EPIPE;
				return -1;
			}
			off += (size_t)w;
		}
	}
	return 0;
}

/* CMD's process, forked by the guard while reflease still waits for the
 * lease (issue 43: nothing is forked on the handoff's path). In its own
 * process group, it dies with the guard, and execs CMD once the guard
 * passes the go on (the environment, the terminal); without a go (the lease
 * not taken, reflease gone) it exits having run nothing. */
static void child_main(char **cmd, pid_t parent, int go_r, guard_release *rel)
{
	guard_msg m;
	char *env;

	setpgid(0, 0);
	/* Dies with the guard; then make sure the guard did not die before
	 * the request took effect. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(EXIT_SOFTWARE);
	if (!read_go(go_r, &m, &env))
		_exit(0);
	close(go_r);
	if (rel->go && env)
		rel->go(env, m.len, rel->go_payload);
	free(env);
	child_exec(cmd, m.value);
}

/* The prepared guard waits for the go message (run_guard_go) and passes it
 * on to CMD's process (@p go_w); reflease gone before it (the lease not
 * taken, an interrupted wait, a SIGKILL): nothing ran, nothing is held by
 * this run, the guard exits (and CMD's process with it: PDEATHSIG). */
static void guard_wait_go(int ctl_r, int go_w, guard_release *rel, int *fg, double *deadline)
{
	guard_msg m;
	char *env;

	if (!read_go(ctl_r, &m, &env))
		_exit(0);
	*fg = m.value;
	*deadline = m.d;
	memcpy(rel->token, m.token, sizeof(rel->token));
	if (rel->go && env)
		rel->go(env, m.len, rel->go_payload);
	write_go(go_w, &m, env); /* CMD's process gone: reap() reports it */
	close(go_w);
	free(env);
}

static void guard_main(char **cmd, int ctl_r, int ev_w, double kill_grace, double leftover_grace,
                       guard_release *rel)
{
	pid_t self = getpid(), pid;
	sigset_t chld;
	killer k;
	double deadline = 0;
	int sfd, go[2], fg = 0, status = 0, cmd_done = 0, parent_gone = 0, reported = 0,
	                stopped = 0;

	memset(&k, 0, sizeof(k));
	close_cloexec_fds(ctl_r, ev_w);
	/* orphans of the tree re-parent here, whatever their session */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* own process group: a kill of reflease's group leaves the guard */
	setpgid(0, 0);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (pipe2(go, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		/* reflease's go then finds the guard gone (EPIPE): CMD not started */
		fprintf(stderr, "reflease run: cannot start CMD: %s\n", strerror(errno));
		_exit(0);
	}
	if (pid == 0) {
		close(go[1]);
		close(ctl_r);
		close(ev_w);
		child_main(cmd, self, go[0], rel);
	}
	close(go[0]);
	setpgid(pid, pid); /* also here: no window where the group is wrong */
	guard_wait_go(ctl_r, go[1], rel, &fg, &deadline);
	if (fg) {
		block_ttou();
		tcsetpgrp(STDIN_FILENO, pid);
	}
	for (;;) {
		struct pollfd p[2] = {{sfd, POLLIN, 0}, {parent_gone ? -1 : ctl_r, POLLIN, 0}};
		double now = run_clock();
		int ms, r;

		if (!k.active && deadline > 0 && now >= deadline + GUARD_DEADLINE_LAG)
			killer_start(&k, SIGTERM, kill_grace); /* the watchdog (§6) */
		r = reap(pid, &status, &cmd_done, &stopped);
		if (stopped && !cmd_done && !k.active) {
			/* Ctrl-Z: reflease stops itself too (as sudo does) */
			send_msg(ev_w, 'S', stopped, (double)pid);
		}
		stopped = 0;
		if (cmd_done && !reported) {
			reported = 1;
			send_msg(ev_w, 'C', status, 0);
			/* what CMD left: nothing when the guard has no child (r < 0) */
			if (!k.active && r >= 0 && tree_scan(NULL) > 0)
				killer_start(&k, SIGTERM, leftover_grace);
		}
		if (k.active && killer_step(&k) == 0 && cmd_done) {
			r = reap(pid, &status, &cmd_done, NULL);
			if (r < 0)
				break;
		} else if (cmd_done && !k.active && r < 0) {
			/* No child left, zombies included (ECHILD), so an empty tree:
			 * every descendant is the guard's child or below one, since an
			 * orphan re-parents to the guard (the subreaper) in its parent's
			 * exit, before that parent can be reaped; and a tree without a
			 * process cannot fork. A walk of /proc (every process's stat,
			 * 3-9 ms under load) could find nothing and would only delay
			 * run's release (issue 43). */
			break;
		}
		ms = IDLE_POLL_MS;
		if (k.active)
			ms = KILL_POLL_MS;
		else if (deadline > 0 && (deadline + GUARD_DEADLINE_LAG - now) * 1000.0 < ms)
			ms = (int)((deadline + GUARD_DEADLINE_LAG - now) * 1000.0) + 1;
		if (poll(p, 2, ms < 0 ? 0 : ms) < 0 && errno != EINTR)
			ms = 0;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) > 0)
				;
		}
		if (!parent_gone && p[1].revents) {
			guard_msg m[16];
			ssize_t n = read(ctl_r, m, sizeof(m));
			size_t i;
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				/* reflease died (SIGKILL, OOM): nobody keeps the lease */
				parent_gone = 1;
				killer_start(&k, SIGTERM, kill_grace);
			}
			for (i = 0; n > 0 && i < (size_t)n / sizeof(m[0]); i++) {
				if (m[i].type == 'D') {
					deadline = m[i].d;
					/* the kill_grace of the TTL behind it (ms), when
					 * shorter: a lease CMD shortened (§6) */
					if (m[i].value > 0 && m[i].value / 1000.0 < kill_grace)
						kill_grace = m[i].value / 1000.0;
				} else if (m[i].type == 'K')
					killer_start(&k, m[i].value, m[i].d);
				else if (m[i].type == 'T')
					memcpy(rel->token, m[i].token, sizeof(rel->token));
				else if (m[i].type == 'R')
					tree_continue();
			}
		}
	}
	if (parent_gone && rel->fn && rel->token[0])
		rel->fn(rel->token, rel->payload); /* nobody else will (issue 23) */
	send_msg(ev_w, 'E', 0, 0);
	_exit(0);
}

int run_guard_prepare(run_guard *g, char **cmd, double kill_grace, double leftover_grace,
                      run_guard_release_fn release, void *release_payload, run_guard_go_fn go,
                      void *go_payload)
{
	guard_release rel;
	sigset_t block, old;
	int ctl[2], ev[2], e;
	pid_t pid;

	memset(g, 0, sizeof(*g));
	g->pid = -1;
	g->ctl_w = g->ev_r = -1;
	if (pipe2(ctl, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(ev, O_CLOEXEC) < 0) {
		close(ctl[0]);
		close(ctl[1]);
		return -1;
	}
	/* the guard starts with them blocked: no window where a signal meant
	 * for reflease (pkill) ends the guard before it blocks them */
	run_terminating_signals(&block);
	sigaddset(&block, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	e = errno;
	if (pid == 0) {
		close(ctl[1]);
		close(ev[0]);
		fcntl(ctl[0], F_SETFL, O_NONBLOCK);
		memset(&rel, 0, sizeof(rel));
		rel.fn = release;
		rel.payload = release_payload;
		rel.go = go;
		rel.go_payload = go_payload;
		guard_main(cmd, ctl[0], ev[1], kill_grace, leftover_grace, &rel);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		close(ctl[0]);
		close(ctl[1]);
		close(ev[0]);
		close(ev[1]);
		errno = e;
		return -1;
	}
	close(ctl[0]);
	close(ev[1]);
	fcntl(ev[0], F_SETFL, O_NONBLOCK);
	g->pid = pid;
	g->ctl_w = ctl[1];
	g->ev_r = ev[0];
	return 0;
}

int run_guard_go(run_guard *g, int fg, double deadline, const char *token, const char *env,
                 size_t len)
{
	guard_msg m;

	if (g->pid <= 0 || g->started || len > GUARD_ENV_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.type = 'G';
	m.value = fg;
	m.d = deadline;
	m.len = (uint32_t)len;
	snprintf(m.token, sizeof(m.token), "%s", token ? token : "");
	if (write_go(g->ctl_w, &m, env) < 0)
		return -1;
	g->started = 1;
	return 0;
}

void run_guard_cancel(run_guard *g)
{
	if (g->pid <= 0 || g->started)
		return;
	close(g->ctl_w);
	close(g->ev_r);
	while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
		;
	g->pid = -1;
	g->ctl_w = g->ev_r = -1;
}

void run_guard_deadline(run_guard *g, double deadline, double grace)
{
	send_msg(g->ctl_w, 'D', grace > 0 ? (int32_t)(grace * 1000.0) : 0, deadline);
}

void run_guard_token(run_guard *g, const char *token)
{
	send_msg_token(g->ctl_w, 'T', 0, 0, token);
}

void run_guard_resume(run_guard *g)
{
	send_msg(g->ctl_w, 'R', 0, 0);
}

void run_guard_kill(run_guard *g, int sig, double grace)
{
	send_msg(g->ctl_w, 'K', sig, grace);
}

int run_guard_read(run_guard *g, int *status)
{
	guard_msg m;
	ssize_t n;

	if (g->eof)
		return RUN_GUARD_EOF;
	while ((n = read(g->ev_r, &m, sizeof(m))) < 0 && errno == EINTR)
		;
	if (n == 0) {
		g->eof = 1;
		return RUN_GUARD_EOF;
	}
	if (n != (ssize_t)sizeof(m))
		return RUN_GUARD_NONE;
	if (m.type == 'C') {
		*status = m.value;
		return RUN_GUARD_CMD_EXITED;
	}
	if (m.type == 'S') {
		*status = m.value;
		g->cmd_pid = (pid_t)m.d;
		return RUN_GUARD_CMD_STOPPED;
	}
	return m.type == 'E' ? RUN_GUARD_TREE_GONE : RUN_GUARD_NONE;
}
