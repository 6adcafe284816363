/* Wake-on-change for a local waiter (protocol.md §5 "Waiting"): inotify on
 * the directory of the lease's loose ref, on refs/ (the namespace directory
 * appearing) and on the git directory (packed-refs is replaced by a rename),
 * re-checked by a read at least every LEASE_WATCH_CAP_MS so a missed event
 * costs at most that. Reads only. */
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

/* Watches: [0] the loose ref's directory, [1] <commondir>/refs, [2] <commondir>.
 * A watch that cannot be added (directory absent) is left to the cap. */
static int add_watches(int fd, const char *commondir, const char *refname)
{
	static const uint32_t dir_mask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
	                                 IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF;
	const char *slash = strrchr(refname, '/');
	char path[4096];
	int n, added = 0;

	if (slash) {
		n = snprintf(path, sizeof(path), "%s/%.*s", commondir, (int)(slash - refname),
		             refname);
		if (n > 0 && (size_t)n < sizeof(path) && inotify_add_watch(fd, path, dir_mask) >= 0)
			added++;
	}
	n = snprintf(path, sizeof(path), "%s/refs", commondir);
	if (n > 0 && (size_t)n < sizeof(path) &&
	    inotify_add_watch(fd, path, IN_CREATE | IN_MOVED_TO) >= 0)
		added++;
	if (inotify_add_watch(fd, commondir,
	                      IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE) >= 0)
		added++;
	return added;
}

/* Read every queued event: whatever they name, the caller re-reads the ref
 * (a read costs less than telling the events apart, and a burst of writes to
 * other leases only brings the next re-read forward). */
static void drain(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

int lease__fs_wait_ref_change(lease_transport *t, const lease_clock *clk, lease_probe_fn probe,
                              const char *commondir, const char *refname, int known_present,
                              const lease_oid *known_oid, int timeout_ms)
{
	int64_t end = lease__env_mono_ms(clk) + (timeout_ms > 0 ? timeout_ms : 0);
	/* an injected sleep (virtual time) cannot be a poll(2) timeout: probe */
	int fd = lease__env_sleep_injected(clk) ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	int rc = 0;

	if (fd >= 0 && add_watches(fd, commondir, refname) == 0) {
		close(fd);
		fd = -1;
	}
	for (;;) {
		struct pollfd pfd;
		int64_t left;
		int n;

		/* First round: a change that came before the watches were set. */
		if (differs(t, probe, refname, known_present, known_oid)) {
			rc = 1;
			break;
		}
		if ((left = end - lease__env_mono_ms(clk)) <= 0)
			break;
		if (left > LEASE_WATCH_CAP_MS)
			left = LEASE_WATCH_CAP_MS;
		if (fd < 0) {
			if (lease__env_sleep_ms(clk, left, LEASE_SLEEP_INTERRUPTIBLE) < 0) {
				rc = 1; /* a signal: let the caller look at it */
				break;
			}
			continue;
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR) {
			rc = 1;
			break;
		}
		if (n > 0)
			drain(fd);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}
