/* The remote backend's network deadline (issue 24 item 3, protocol.md §9
 * "remote"): every connection, read and write libgit2 makes for a remote:
 * operation ends by the operation's deadline (--timeout), whatever the
 * libgit2 release.
 *
 * libgit2 >= 1.7 bounds each connect and each read or write itself
 * (GIT_OPT_SET_SERVER_CONNECT_TIMEOUT, GIT_OPT_SET_SERVER_TIMEOUT): they are
 * set to what is left of the operation before each network call.
 *
 * libgit2 1.5 has no bound: a server that accepts and never answers blocks
 * the call forever. There reflease registers its own standard socket stream
 * (git_stream_register(GIT_STREAM_STANDARD), git2/sys/stream.h) — the TCP
 * connection under git://, http:// and, below libgit2's TLS stream, https://
 * — whose connect, read and write wait in poll(2) for at most what is left
 * and fail with "timed out" past it. The stream keeps the layout of libgit2
 * 1.5's own socket stream (git_socket_stream: the stream, host, port, then
 * the socket), since its ssh transport hands that socket to libssh2; for
 * ssh:// the socket also carries SO_RCVTIMEO/SO_SNDTIMEO of the time left
 * when it connects. */
#include "git2compat.h"
#include "gitobj.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The deadline of the calling thread's network operation (lease__mono_ms),
 * 0 = none (the per-call bounds of git2compat.h only). */
static _Thread_local int64_t net_deadline_ms;

#if LEASE_GIT_NET_TIMEOUTS

int lease__git_net_setup(void)
{
	return lease_git_net_timeouts();
}

void lease__git_set_deadline(int64_t mono_ms)
{
	int64_t left = mono_ms > 0 ? mono_ms - lease__mono_ms() : 0;
	int io = LEASE_GIT_IO_TIMEOUT_MS, conn = LEASE_GIT_CONNECT_TIMEOUT_MS;

	net_deadline_ms = mono_ms;
	if (mono_ms > 0) {
		if (left < 1)
			left = 1;
		if (left < io)
			io = (int)left;
		if (left < conn)
			conn = (int)left;
	}
	if (git_libgit2_opts(GIT_OPT_SET_SERVER_CONNECT_TIMEOUT, conn) < 0 ||
	    git_libgit2_opts(GIT_OPT_SET_SERVER_TIMEOUT, io) < 0)
		git_error_clear();
}

#else

#include <fcntl.h>
#include <git2/sys/stream.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* libgit2 1.5's git_socket_stream, field for field (see above). */
typedef struct dl_stream {
	git_stream parent;
	char *host;
	char *port;
	int s;
} dl_stream;

/* Milliseconds left (>= 0), or the per-call bound without a deadline. */
static int left_ms(int bound)
{
	int64_t left;

	if (net_deadline_ms <= 0)
		return bound;
	left = net_deadline_ms - lease__mono_ms();
	if (left < 0)
		left = 0;
	return left < bound ? (int)left : bound;
}

static int net_error(const char *what, const dl_stream *st)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "%s %s:%s", what, st->host, st->port);
	git_error_set_str(GIT_ERROR_NET, msg);
	return -1;
}

/* Wait for @p events on the socket within what is left; 1 ready, 0 timed out. */
static int wait_for(int s, short events, int bound)
{
	struct pollfd p;
	int rc;

	p.fd = s;
	p.events = events;
	p.revents = 0;
	do {
		rc = poll(&p, 1, left_ms(bound));
	} while (rc < 0 && errno == EINTR);
	return rc > 0 ? 1 : rc == 0 ? 0 : -1;
}

static void set_io_timeouts(int s)
{
	int ms = left_ms(LEASE_GIT_IO_TIMEOUT_MS);
	struct timeval tv;

	if (ms < 1)
		ms = 1;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	(void)setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One address: a non-blocking connect waited for within what is left.
 * 0 connected (st->s set), -1 failed (errno), -2 timed out. */
static int connect_one(dl_stream *st, const struct addrinfo *ai)
{
	int s = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol), err = 0, flags, rc;
	socklen_t len = sizeof(err);

	if (s < 0)
		return -1;
	flags = fcntl(s, F_GETFL);
	if (flags < 0 || fcntl(s, F_SETFL, flags | O_NONBLOCK) < 0)
		goto fail;
	if (connect(s, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS)
			goto fail;
		if ((rc = wait_for(s, POLLOUT, LEASE_GIT_CONNECT_TIMEOUT_MS)) == 0) {
			close(s);
			return -2;
		}
		if (rc < 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			goto fail;
		if (err) {
			errno = err;
			goto fail;
		}
	}
	if (fcntl(s, F_SETFL, flags) < 0)
		goto fail;
	set_io_timeouts(s);
	st->s = s;
	return 0;
fail:
	err = errno;
	close(s);
	errno = err;
	return -1;
}

static int dl_connect(git_stream *stream)
{
	dl_stream *st = (dl_stream *)stream;
	struct addrinfo hints, *res = NULL, *ai;
	int rc = -1, gai;
	char msg[700];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((gai = getaddrinfo(st->host, st->port, &hints, &res)) != 0) {
		snprintf(msg, sizeof(msg), "failed to resolve address for %s: %s", st->host,
		         gai_strerror(gai));
		git_error_set_str(GIT_ERROR_NET, msg);
		return -1;
	}
	errno = 0;
	for (ai = res; ai && rc != 0; ai = ai->ai_next) {
		rc = connect_one(st, ai);
		if (rc == -2)
			break;
	}
	freeaddrinfo(res);
	if (rc == -2)
		return net_error("timed out (the operation timeout, --timeout) connecting to", st);
	if (rc != 0) {
		snprintf(msg, sizeof(msg), "failed to connect to %s:%s: %s", st->host, st->port,
		         strerror(errno ? errno : ECONNREFUSED));
		git_error_set_str(GIT_ERROR_NET, msg);
		return -1;
	}
	return 0;
}

static ssize_t dl_read(git_stream *stream, void *data, size_t len)
{
	dl_stream *st = (dl_stream *)stream;
	ssize_t n;
	int rc;

	if ((rc = wait_for(st->s, POLLIN, LEASE_GIT_IO_TIMEOUT_MS)) == 0)
		return net_error("timed out (the operation timeout, --timeout) waiting for", st);
	if (rc < 0)
		return net_error("failed to read from", st);
	do {
		n = recv(st->s, data, len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return net_error("failed to read from", st);
	return n;
}

static ssize_t dl_write(git_stream *stream, const char *data, size_t len, int flags)
{
	dl_stream *st = (dl_stream *)stream;
	size_t off = 0;
	ssize_t n;
	int rc;

	(void)flags;
	while (off < len) {
		if ((rc = wait_for(st->s, POLLOUT, LEASE_GIT_IO_TIMEOUT_MS)) == 0)
			return net_error("timed out (the operation timeout, --timeout) writing to",
			                 st);
		if (rc < 0)
			return net_error("failed to write to", st);
		n = send(st->s, data + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return net_error("failed to write to", st);
		off += (size_t)n;
	}
	return (ssize_t)off;
}

static int dl_close(git_stream *stream)
{
	dl_stream *st = (dl_stream *)stream;

	if (st->s >= 0)
		close(st->s);
	st->s = -1;
	return 0;
}

static void dl_free(git_stream *stream)
{
	dl_stream *st = (dl_stream *)stream;

	if (st->s >= 0)
		close(st->s);
	free(st->host);
	free(st->port);
	free(st);
}

static int dl_new(git_stream **out, const char *host, const char *port)
{
	dl_stream *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (!st || !(st->host = strdup(host)) || !(st->port = strdup(port ? port : "80"))) {
		if (st)
			free(st->host);
		free(st);
		git_error_set_str(GIT_ERROR_NOMEMORY, "out of memory");
		return -1;
	}
	st->s = -1;
	st->parent.version = GIT_STREAM_VERSION;
	st->parent.connect = dl_connect;
	st->parent.read = dl_read;
	st->parent.write = dl_write;
	st->parent.close = dl_close;
	st->parent.free = dl_free;
	*out = &st->parent;
	return 0;
}

int lease__git_net_setup(void)
{
	git_stream_registration reg;

	memset(&reg, 0, sizeof(reg));
	reg.version = GIT_STREAM_VERSION;
	reg.init = dl_new;
	return git_stream_register(GIT_STREAM_STANDARD, &reg);
}

void lease__git_set_deadline(int64_t mono_ms)
{
	net_deadline_ms = mono_ms;
}

#endif
