/* Wake-on-change for a local waiter (protocol.md §5 "Waiting"): inotify on
 * the directory of the lease's loose ref, on refs/ (the namespace directory
 * appearing) and on the git directory (packed-refs is replaced by a rename),
 * re-checked by a read at least every LEASE_WATCH_CAP_MS so a missed event
 * costs at most that. Reads only.
 *
 * The ref is re-read only on an event that can change what it reads (issue
 * 43): one naming the ref's own file or packed-refs, or one that says a
 * watch may have lost track (a watched directory gone, the queue overflowed,
 * anything on refs/). A writer's lock files ("x.lock", reflease's
 * "x..owner-*.lock", packed-refs.lock) and other leases' files wake the
 * waiter for nothing: a reflease writer created two of them before its
 * rename, each a wake and a re-read of an unchanged ref on the handoff's
 * path. Their creation is not watched (IN_CREATE) and their other events are
 * read and dropped. Neither delays a re-read past the cap: the cap runs from
 * the last read, whatever the events. */
#define _DEFAULT_SOURCE
#include "backend.h"
#include "util/util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* The ref differs from what the caller knows (a failed read is no change). */
static int differs(lease_transport *t, lease_probe_fn probe, const char *refname, int known_present,
                   const lease_oid *known_oid)
{
	lease_probe p;

	memset(&p, 0, sizeof(p));
	if (probe(t, refname, &p) < 0)
		return 0;
	return p.present != (known_present != 0) ||
	       (p.present && !lease_oid_equal(&p.oid, known_oid));
}

/* The watches of one wait: wd[0] the loose ref's directory, [1]
 * <commondir>/refs, [2] <commondir> (-1: not added, left to the cap). */
typedef struct watch_set {
	int fd;
	int wd[3];
	const char *commondir;
	const char *refname;
	const char *leaf; /* the loose ref's file name in wd[0]'s directory */
} watch_set;

/* Add (or renew: inotify_add_watch on a watched path returns its wd) the
 * watches that are missing. A directory that does not exist yet is left
 * out; refs/ tells when it appears. */
static void add_watches(watch_set *ws)
{
	/* Not IN_CREATE: a ref file appears by a rename (IN_MOVED_TO) or is
	 * written in place (IN_CLOSE_WRITE, when complete); what a writer
	 * creates beside it is its lock ("x.lock" linked or created, reflease's
	 * owner file), two wakes before every rename (issue 43). */
	static const uint32_t dir_mask = IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE |
	                                 IN_ATTRIB | IN_DELETE_SELF;
	const char *slash = strrchr(ws->refname, '/');
	char path[4096];
	int n;

	if (slash && ws->wd[0] < 0) {
		n = snprintf(path, sizeof(path), "%s/%.*s", ws->commondir,
		             (int)(slash - ws->refname), ws->refname);
		if (n > 0 && (size_t)n < sizeof(path))
			ws->wd[0] = inotify_add_watch(ws->fd, path, dir_mask);
	}
	if (ws->wd[1] < 0) {
		n = snprintf(path, sizeof(path), "%s/refs", ws->commondir);
		if (n > 0 && (size_t)n < sizeof(path))
			ws->wd[1] = inotify_add_watch(ws->fd, path,
			                              IN_CREATE | IN_MOVED_TO | IN_MASK_ADD);
	}
	if (ws->wd[2] < 0)
		ws->wd[2] = inotify_add_watch(ws->fd, ws->commondir,
		                              IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE);
}

/* Can @p ev change what a read of the ref returns? */
static int matters(watch_set *ws, const struct inotify_event *ev)
{
	if (ev->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_UNMOUNT)) {
		if (ev->mask & IN_IGNORED) { /* its directory went: watch it again when back */
			int i;

			for (i = 0; i < 3; i++)
				if (ws->wd[i] == ev->wd)
					ws->wd[i] = -1;
		}
		return 1;
	}
	if (ev->wd == ws->wd[0])
		return ev->len > 0 && strcmp(ev->name, ws->leaf) == 0;
	if (ev->wd == ws->wd[2])
		return ev->len > 0 && strcmp(ev->name, "packed-refs") == 0;
	return 1; /* refs/: the namespace directory may have appeared */
}

/* Read every queued event; 1 when one of them matters (then the watches
 * that are missing are added again before the re-read). */
static int drain(watch_set *ws)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n, off;
	int hit = 0;

	while ((n = read(ws->fd, buf, sizeof(buf))) > 0)
		for (off = 0; off + (ssize_t)sizeof(*ev) <= n;
		     off += (ssize_t)sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(const void *)(buf + off);
			hit |= matters(ws, ev);
		}
	if (hit)
		add_watches(ws);
	return hit;
}

/* The inotify descriptor of this wait: the transport's cached one (its
 * stale events read and dropped), else a new one. */
static int take_fd(int *cache)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int fd = cache ? __atomic_exchange_n(cache, -1, __ATOMIC_ACQ_REL) : -1;

	if (fd >= 0) {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		return fd;
	}
	return inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

/* The end of a wait: its watches removed (cheap; the kernel frees them
 * after an SRCU grace period, off this thread) and the descriptor given
 * back to the transport. Closing it now would wait for that grace period,
 * 2.5 ms measured, between the wake and the acquire. */
static void put_fd(watch_set *ws, int *cache)
{
	int i, old;

	for (i = 0; i < 3; i++)
		if (ws->wd[i] >= 0)
			(void)inotify_rm_watch(ws->fd, ws->wd[i]);
	old = cache ? __atomic_exchange_n(cache, ws->fd, __ATOMIC_ACQ_REL) : ws->fd;
	if (old >= 0)
		close(old);
}

/* Wait until the next read is due (@p wait_ms) or an event that matters;
 * 1 = read now, 0 = waited, -1 = interrupted by a signal. */
static int wait_once(watch_set *ws, const lease_clock *clk, int64_t wait_ms)
{
	struct pollfd pfd;
	int n;

	if (ws->fd < 0)
		return lease__env_sleep_ms(clk, wait_ms, LEASE_SLEEP_INTERRUPTIBLE) < 0 ? -1 : 0;
	pfd.fd = ws->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	n = poll(&pfd, 1, (int)wait_ms);
	if (n < 0 && errno == EINTR)
		return -1;
	return n > 0 && drain(ws);
}

int lease__fs_wait_ref_change(lease_transport *t, const lease_clock *clk, lease_probe_fn probe,
                              const char *commondir, const char *refname, int known_present,
                              const lease_oid *known_oid, int timeout_ms, int *watch_fd)
{
	int64_t now = lease__env_mono_ms(clk), end = now + (timeout_ms > 0 ? timeout_ms : 0);
	int64_t next_read = now; /* first: a change that came before the watches were set */
	const char *slash = strrchr(refname, '/');
	watch_set ws = {-1, {-1, -1, -1}, commondir, refname, slash ? slash + 1 : refname};
	int rc = 0, w;

	/* an injected sleep (virtual time) cannot be a poll(2) timeout: probe */
	if (!lease__env_sleep_injected(clk) && (ws.fd = take_fd(watch_fd)) >= 0) {
		add_watches(&ws);
		if (ws.wd[0] < 0 && ws.wd[1] < 0 && ws.wd[2] < 0) {
			put_fd(&ws, watch_fd);
			ws.fd = -1;
		}
	}
	for (;;) {
		if ((now = lease__env_mono_ms(clk)) >= next_read) {
			if (differs(t, probe, refname, known_present, known_oid)) {
				rc = 1;
				break;
			}
			now = lease__env_mono_ms(clk);
			next_read = now + LEASE_WATCH_CAP_MS;
		}
		if (now >= end)
			break;
		w = wait_once(&ws, clk, (next_read < end ? next_read : end) - now);
		if (w < 0) {
			rc = 1; /* a signal: let the caller look at it */
			break;
		}
		if (w > 0)
			next_read = 0;
	}
	if (ws.fd >= 0)
		put_fd(&ws, watch_fd);
	return rc;
}
