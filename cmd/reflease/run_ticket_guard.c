/*
 * The fair waiter's ticket guard, for `run --fair` and `acquire --wait
 * --fair` (issue 40 Q1; protocol.md §5 "Fair waiting"): while `run --fair`
 * waits in a lease's queue nothing runs yet and the run guard (run_guard.c)
 * does not exist, and `acquire` has no other process, so a SIGKILLed waiter
 * would leave its ticket to block the queue until the ticket's TTL (the
 * lease's: 300 s by default). A small process forked
 * before the wait learns every id the waiter could give a ticket — the
 * store's randomness goes through it (cli_ctx.random): each draw of a
 * ticket id's size is sent down a pipe — and when the pipe reaches EOF
 * without "done" (the waiter died), it deletes, by CAS from the oid read,
 * the lease's tickets whose id is one of those draws: only this waiter's.
 */
#define _GNU_SOURCE
#include "run_guard.h"

#include "cli.h"
#include "reflease/primitives.h"
#include "reflease/queue.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#define ID_BYTES (LEASE_TICKET_ID_HEX / 2)
#define MAX_IDS  256 /* a waiter draws an id per ticket it takes; more are dropped */

/* One record on the pipe: 'I' and a draw of ID_BYTES, or 'D' (done). */
typedef struct tg_msg {
	char type;
	unsigned char id[ID_BYTES];
} tg_msg;

static int tg_fd = -1; /* the waiter's end (one waiter per process) */

/* lease_random.fill of the waiter's store: getrandom(2), and every draw of
 * a ticket id's size told to the guard. */
static int tg_fill(unsigned char *buf, size_t len, void *payload)
{
	size_t n = 0;
	ssize_t r;

	(void)payload;
	while (n < len) {
		if ((r = getrandom(buf + n, len - n, 0)) < 0) {
			if (errno == EINTR)
				continue;
			return LEASE_EINTERNAL;
		}
		n += (size_t)r;
	}
	if (len == ID_BYTES && tg_fd >= 0) {
		tg_msg m;

		m.type = 'I';
		memcpy(m.id, buf, ID_BYTES);
		(void)!write(tg_fd, &m, sizeof(m));
	}
	return 0;
}

/* In the guard, the waiter gone: delete its tickets of @p name. */
static void tg_drop(cli_ctx *ctx, const char *name, char ids[][LEASE_TICKET_ID_HEX + 1], size_t n)
{
	lease_store *st = NULL;
	lease_queue q;
	size_t i, k, dropped = 0;

	ctx->st = NULL; /* the waiter's handle is not this process's to use */
	ctx->random.fill = NULL;
	if (cli_open_store(ctx, &st) < 0)
		return;
	memset(&q, 0, sizeof(q));
	if (lease_queue_read(&q, st, name) == 0)
		for (i = 0; i < q.count; i++)
			for (k = 0; k < n; k++)
				if (strcmp(q.items[i].id, ids[k]) == 0 &&
				    lease_ticket_delete(st, &q.items[i]) == 0)
					dropped++;
	if (dropped)
		fprintf(stderr,
		        "reflease %s: %s: the fair waiter died; its ticket was removed from the "
		        "queue\n",
		        ctx->command ? ctx->command : "run", name);
	lease_queue_clear(&q);
	lease_store_free(st);
	ctx->st = NULL;
}

static void tg_main(cli_ctx *ctx, const char *name, int rfd)
{
	static char ids[MAX_IDS][LEASE_TICKET_ID_HEX + 1];
	size_t n = 0, k;
	tg_msg m;
	ssize_t r;

	for (;;) {
		r = read(rfd, &m, sizeof(m));
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(m))
			break; /* EOF: the waiter is gone */
		if (m.type == 'D')
			_exit(0);
		if (n < MAX_IDS) {
			for (k = 0; k < ID_BYTES; k++)
				snprintf(ids[n] + 2 * k, 3, "%02x", m.id[k]);
			n++;
		}
	}
	if (n)
		tg_drop(ctx, name, ids, n);
	_exit(0);
}

int run_ticket_guard_start(run_ticket_guard *tg, cli_ctx *ctx, const char *name)
{
	int p[2];
	pid_t pid;

	tg->pid = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[1]);
		/* its own process group: a Ctrl-C of the waiter's group stops
		 * the waiter, which then tells the guard it is done */
		setpgid(0, 0);
		tg_main(ctx, name, p[0]);
	}
	close(p[0]);
	tg->pid = pid;
	tg_fd = p[1];
	ctx->random.fill = tg_fill;
	ctx->random.payload = NULL;
	return 0;
}

void run_ticket_guard_stop(run_ticket_guard *tg, cli_ctx *ctx)
{
	tg_msg m;

	if (tg->pid < 0)
		return;
	memset(&m, 0, sizeof(m));
	m.type = 'D';
	(void)!write(tg_fd, &m, sizeof(m));
	close(tg_fd);
	tg_fd = -1;
	ctx->random.fill = NULL;
	while (waitpid(tg->pid, NULL, 0) < 0 && errno == EINTR)
		;
	tg->pid = -1;
}
