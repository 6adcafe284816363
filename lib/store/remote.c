/* Remote backend (protocol.md §9 "remote"): any git server reached through
 * libgit2 1.5.1's smart protocol (git://, http(s)://, ssh://).
 *
 * Objects live in a local cache: a bare repository per remote URL under
 * $XDG_CACHE_HOME/reflease/<sha1 of the URL>.git (fallback ~/.cache),
 * created in a temporary directory and renamed into place so concurrent first
 * uses cannot half-create it. Payload commits are written there and pushed
 * from it; lease commits are fetched into it (refs/reflease/cache/..., never a
 * mirror fetch). The cache holds no authority: every answer about a ref comes
 * from the server's advertisement.
 *
 * read   = ls-remote; when the advertised object is not cached, fetch it on
 *          the same connection and ls-remote again: the ref must still hold
 *          the oid (protocol.md §3, "a transport that copies re-reads").
 * write  = push from refs/reflease/out/<pid>-<nonce> (deleted afterwards;
 *          libgit2 1.5.1 cannot push a bare oid) to refs/<ns>/<name>, forced
 *          (+src:dst, or :dst to delete). The push_negotiation callback aborts
 *          unless the advertised old oid equals the expected one (create: not
 *          advertised); receive-pack then compares that old oid again under
 *          its ref lock: a true compare-and-swap. The per-ref result comes only
 *          from push_update_reference (git_remote_push returns 0 for a
 *          rejected ref): a status = rejected.
 * list   = one ls-remote plus one fetch of every listed ref (objects bring
 *          their parents); commits and parents are prefetched from the cache.
 *
 * file:// URLs are served directly by the local backend's code (lib/store/
 * local.c) with this backend's time figures: libgit2 1.5.1's file:// push is
 * no compare-and-swap (it replaces a ref with force and no old-oid check and
 * creates with the pre-lock existence check) and its file:// fetch copies the
 * objects of every ref of the repository.
 *
 * Credentials: the ssh agent for ssh://; REFLEASE_GIT_TOKEN for http(s)://
 * (user "x-access-token" unless the URL names one), sent only over https or
 * to a loopback host. A password inside the URL is refused. Neither is ever
 * logged or put into an error message. */
#define _GNU_SOURCE
#include "backend.h"
#include "git2compat.h"
#include "gitobj.h"
#include "http.h"
#include "util/util.h"

#include <errno.h>
#include <ftw.h>
#include <git2.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The empty tree every payload commit points at (protocol.md §2). */
/* Where fetched lease refs are kept in the cache (negotiation hints only). */
#define CACHE_PREFIX "refs/reflease/cache/"
/* Per-process push sources in the cache. */
#define OUT_PREFIX "refs/reflease/out/"
/* Bound on ls/fetch/ls rounds of one read whose ref keeps moving; before
 * each round after the first, a pause of 25 ms doubling to 400 ms, jittered
 * (readers that collided spread out; about 1.6 s in all). */
#define READ_ROUNDS 8
/* Bound on credential callback invocations per operation. */
#define CRED_TRIES 2

typedef struct remote_transport {
	lease_transport base;
	git_repository *cache;
	char *url;
	char *git_url;      /* what libgit2 is given: http(s) without the URL's user */
	char url_user[128]; /* the user an http(s) URL names ("" = none) */
	char *token;        /* the store options' git_token, wiped on free */
	int have_empty_tree;
	lease_probe poll;       /* a waiter's last ls-remote (wait_change) */
	int64_t op_deadline_ms; /* lease__mono_ms(): the running operation's end, 0 = none */
	lease_clock clock;      /* the store options' clock: a waiter's polls */
	lease_log_fn log;       /* the store options' logger */
	void *log_payload;
	int log_level;
	char errbuf[2048];
} remote_transport;

/* State shared with libgit2's callbacks for one network operation. */
typedef struct net_ctx {
	remote_transport *rt;
	const char *refname; /* push target */
	int creating;        /* expected old = not advertised */
	lease_oid expected;
	int neg_called, neg_aborted;
	lease_oid advertised; /* zero = not advertised */
	int got_status;
	int rejected;
	char status[512];
	int cred_calls;
	int offered_token; /* REFLEASE_GIT_TOKEN was offered on this connection */
	int auth_failed;
} net_ctx;

static remote_transport *R(lease_transport *t)
{
	return (remote_transport *)t;
}

/* Record @p what plus libgit2's last message and return @p code. */
static int fail(remote_transport *rt, int code, const char *what)
{
	const git_error *e = git_error_last();

	lease__error_set(rt->errbuf, sizeof(rt->errbuf), "%s%s%s", what,
	                 e && e->message ? ": " : "", e && e->message ? e->message : "");
	return code;
}

static int contains(const char *hay, const char *needle)
{
	return hay && strcasestr(hay, needle) != NULL;
}

static void url_host(char *out, size_t outlen, const char *url);

/* Map a failed libgit2 network or object call. */
static int map_error(remote_transport *rt, const net_ctx *ctx, int gerr, const char *what)
{
	const git_error *e = git_error_last();
	const char *m = e ? e->message : NULL;

	if ((ctx && ctx->auth_failed) || gerr == GIT_EAUTH || contains(m, "status code: 401") ||
	    contains(m, "status code: 403") || contains(m, "authentication") ||
	    contains(m, "error authenticating") || contains(m, "permission denied"))
		return fail(rt, LEASE_EAUTH, what);
	if (gerr == GIT_ECERTIFICATE || contains(m, "certificate")) {
		char host[256], msg[400];
		url_host(host, sizeof(host), rt->url);
		snprintf(msg, sizeof(msg),
		         "TLS: the certificate of %s does not verify (trust a private CA with "
		         "--ca-bundle FILE or SSL_CERT_FILE)",
		         host);
		return fail(rt, LEASE_ECONFIG, msg);
	}
	if (contains(m, "status code: 404") || contains(m, "not exported") ||
	    contains(m, "no such repository") || contains(m, "does not appear to be a git") ||
	    contains(m, "unsupported URL protocol"))
		return fail(rt, LEASE_ECONFIG, what);
	return fail(rt, LEASE_ENET, what);
}

/* ------------------------------------------------------------------ URLs */

/* The host part of @p url ("" when none) into @p out. */
static void url_host(char *out, size_t outlen, const char *url)
{
	const char *p = strstr(url, "://"), *end, *at;
	size_t n;

	out[0] = '\0';
	if (!p)
		return;
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (at)
		p = at + 1;
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));
		if (!rb)
			return;
		p++;
		end = rb;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		if (colon)
			end = colon;
	}
	n = (size_t)(end - p);
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

int lease__remote_token_allowed(const char *url)
{
	char host[256];

	if (!url)
		return 0;
	if (strncmp(url, "https://", 8) == 0)
		return 1;
	if (strncmp(url, "http://", 7) != 0)
		return 0;
	url_host(host, sizeof(host), url);
	return lease__host_is_loopback(host);
}

/* 1 when the URL's authority carries a password (user:pass@host). */
static int url_has_password(const char *url)
{
	const char *p = strstr(url, "://"), *end, *at, *colon;

	if (!p)
		return 0;
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (!at)
		return 0;
	colon = memchr(p, ':', (size_t)(at - p));
	return colon != NULL;
}

/* file:///path or file://localhost/path to a percent-decoded path. */
static int file_url_path(char *out, size_t outlen, const char *url)
{
	const char *p = url + strlen("file://");
	size_t n = 0;

	if (strncmp(p, "localhost/", 10) == 0)
		p += 9;
	if (*p != '/')
		return -1;
	for (; *p; p++) {
		char c = *p;
		if (c == '%') {
			int hi = lease__hex_digit(p[1]), lo = hi >= 0 ? lease__hex_digit(p[2]) : -1;
			if (hi < 0 || lo < 0)
				return -1;
			c = (char)(hi * 16 + lo);
			p += 2;
			if (c == '\0')
				return -1;
		}
		if (n + 1 >= outlen)
			return -1;
		out[n++] = c;
	}
	out[n] = '\0';
	return 0;
}

/* ----------------------------------------------------------- callbacks */

/* The user an ssh key or username credential is for: the URL's, else the
 * login name, else "git". */
static const char *cred_user(const char *username_from_url)
{
	struct passwd *pw;

	if (username_from_url && *username_from_url)
		return username_from_url;
	return (pw = getpwuid(getuid())) ? pw->pw_name : "git";
}

static int cb_credentials(git_credential **out, const char *url, const char *username_from_url,
                          unsigned int allowed_types, void *payload)
{
	net_ctx *ctx = payload;
	remote_transport *rt = ctx->rt;

	/* http(s): the URL's user is kept out of libgit2's URL (it would first
	 * send that user with an empty password: a failed login on every
	 * connection, issue 23) and named here, with the token */
	if ((!username_from_url || !*username_from_url) && rt->url_user[0])
		username_from_url = rt->url_user;
	/* a token the server has refused is never offered again */
	if ((allowed_types & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && ctx->offered_token) {
		ctx->auth_failed = 1;
		git_error_set_str(GIT_ERROR_NET,
		                  "authentication failed: the server refused REFLEASE_GIT_TOKEN");
		return -1;
	}
	if (++ctx->cred_calls > CRED_TRIES) {
		ctx->auth_failed = 1;
		git_error_set_str(GIT_ERROR_NET, "authentication failed (credential rejected)");
		return -1;
	}
	if (allowed_types & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, cred_user(username_from_url));
	if (allowed_types & GIT_CREDENTIAL_USERNAME)
		return git_credential_username_new(out, cred_user(username_from_url));
	if ((allowed_types & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && rt->token) {
		if (lease__remote_token_allowed(url) && (ctx->offered_token = 1))
			return git_credential_userpass_plaintext_new(
			        out,
			        username_from_url && *username_from_url ? username_from_url
			                                                : "x-access-token",
			        rt->token);
		ctx->auth_failed = 1;
		git_error_set_str(GIT_ERROR_NET, "authentication required; REFLEASE_GIT_TOKEN "
		                                 "is sent only over https (or to a loopback host)");
		return -1;
	}
	ctx->auth_failed = 1;
	git_error_set_str(GIT_ERROR_NET,
	                  rt->token ? "authentication required; no usable credential"
	                            : "authentication required; set REFLEASE_GIT_TOKEN (https) "
	                              "or load a key into ssh-agent (ssh)");
	return -1;
}

static int cb_negotiation(const git_push_update **updates, size_t len, void *payload)
{
	net_ctx *ctx = payload;
	size_t i;

	ctx->neg_called = 1;
	memset(&ctx->advertised, 0, sizeof(ctx->advertised));
	for (i = 0; i < len; i++) {
		if (strcmp(updates[i]->dst_refname, ctx->refname) == 0)
			lease__git_oid_from(&ctx->advertised, &updates[i]->src);
	}
	if (!lease_oid_equal(&ctx->advertised, &ctx->expected)) {
		ctx->neg_aborted = 1;
		git_error_set_str(GIT_ERROR_CALLBACK,
		                  "the remote ref does not hold the expected oid");
		return GIT_EUSER;
	}
	return 0;
}

static int cb_update_reference(const char *refname, const char *status, void *payload)
{
	net_ctx *ctx = payload;

	if (strcmp(refname, ctx->refname) != 0)
		return 0;
	ctx->got_status = 1;
	ctx->rejected = status != NULL;
	snprintf(ctx->status, sizeof(ctx->status), "%s", status ? status : "");
	return 0;
}

static void init_callbacks(git_remote_callbacks *cb, net_ctx *ctx)
{
	git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb->credentials = cb_credentials;
	cb->push_negotiation = cb_negotiation;
	cb->push_update_reference = cb_update_reference;
	cb->payload = ctx;
}

static void ctx_init(net_ctx *ctx, remote_transport *rt)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->rt = rt;
}

/* ------------------------------------------------------------ the cache */

static int object_cached(remote_transport *rt, const lease_oid *oid)
{
	git_odb *odb = NULL;
	git_oid id;
	int found;

	if (git_repository_odb(&odb, rt->cache) < 0)
		return 0;
	lease__git_oid_to(&id, oid);
	found = git_odb_exists(odb, &id);
	git_odb_free(odb);
	return found;
}

static int remote_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                               const char *message, int64_t when)
{
	remote_transport *rt = R(t);
	const char *what = NULL;

	git_error_clear(); /* no stale message from an earlier call */
	if (lease__git_write_commit(out, rt->cache, &rt->have_empty_tree, parent, message, when,
	                            &what) < 0)
		return fail(rt, LEASE_EINTERNAL, what);
	return 0;
}

static int remote_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	remote_transport *rt = R(t);
	const char *what = NULL;
	int err;

	git_error_clear(); /* no stale message from an earlier call */
	if ((err = lease__git_read_commit(out, rt->cache, oid, &what)) == 0)
		return 0;
	lease_commit_clear(out);
	return fail(rt, err == GIT_ENOTFOUND ? LEASE_ENOTFOUND : LEASE_EINTERNAL,
	            err == GIT_ENOTFOUND ? "object not in the cache" : what);
}

/* ------------------------------------------------------------ the wire */

static void proxy_auto(git_proxy_options *p)
{
	git_proxy_options_init(p, GIT_PROXY_OPTIONS_VERSION);
	p->type = GIT_PROXY_AUTO;
}

/* An anonymous remote for the URL exactly as given: url.<base>.insteadOf is
 * not applied (the lease store is what the user named; libgit2 1.5.1 also
 * leaks a pcre2 match block per config entry it tests for insteadOf). */
static int anon_remote(remote_transport *rt, git_remote **out)
{
	git_remote_create_options o;

	git_remote_create_options_init(&o, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	o.repository = rt->cache;
	o.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	return git_remote_create_with_opts(out, rt->git_url, &o);
}

/* Bound the libgit2 network calls that follow by the operation's deadline
 * (set_deadline; none outside an operation). */
static void net_begin(remote_transport *rt)
{
	lease__git_set_deadline(rt->op_deadline_ms);
}

/* 1 when libgit2's last error says no connection was made at all. */
static int not_connected(void)
{
	const git_error *e = git_error_last();
	const char *m = e ? e->message : NULL;

	return contains(m, "failed to connect") || contains(m, "failed to resolve") ||
	       contains(m, "connection refused") || contains(m, "could not resolve");
}

__attribute__((format(printf, 3, 4))) static void rlog(remote_transport *rt, int level,
                                                       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lease__vlog(rt->log, rt->log_payload, rt->log_level, level, fmt, ap);
	va_end(ap);
}

/* A progress line at -v once the retries of an unreachable remote have
 * lasted 3 s, then every 10 s (issue 23: as github: does). */
static void progress(remote_transport *rt, int64_t start, int64_t *told)
{
	const git_error *e = git_error_last();
	int64_t now = lease__mono_ms();
	char host[256], why[300];

	if (now - start < 3000 || now - *told < 10000)
		return;
	*told = now;
	url_host(host, sizeof(host), rt->url);
	snprintf(why, sizeof(why), "%s", e && e->message ? e->message : "no connection");
	rlog(rt, LEASE_LOG_INFO,
	     "remote: cannot reach %s for %lld s (%s); retrying for another %lld s (--timeout)",
	     host, (long long)((now - start) / 1000), why,
	     (long long)((rt->op_deadline_ms - now) / 1000));
}

/* An anonymous remote connected for fetching (ls-remote). */
static int connect_fetch(remote_transport *rt, net_ctx *ctx, git_remote **out)
{
	git_remote_callbacks cbs;
	git_proxy_options proxy;
	int err;

	int64_t backoff = 500, start = lease__mono_ms(), told = 0, wait;

	*out = NULL;
	for (;;) {
		net_begin(rt);
		if ((err = anon_remote(rt, out)) < 0)
			return map_error(rt, ctx, err, "invalid remote URL");
		init_callbacks(&cbs, ctx);
		proxy_auto(&proxy);
		if ((err = git_remote_connect(*out, GIT_DIRECTION_FETCH, &cbs, &proxy, NULL)) >= 0)
			return 0;
		git_remote_free(*out);
		*out = NULL;
		/* nothing reached the server (refused, not resolved): retried
		 * within the operation's --timeout, as github: does (issue 23) */
		if (!not_connected() || ctx->auth_failed || !rt->op_deadline_ms)
			return map_error(rt, ctx, err, "cannot reach the remote");
		progress(rt, start, &told);
		/* the backoff, but a last attempt with half a second left */
		wait = rt->op_deadline_ms - lease__mono_ms() - 500;
		if (wait <= 0)
			return map_error(rt, ctx, err, "cannot reach the remote");
		lease__sleep_ms(backoff < wait ? backoff : wait, LEASE_SLEEP_FULL);
		backoff = backoff < 4000 ? backoff * 2 : 8000;
		ctx->cred_calls = ctx->offered_token = 0;
	}
}

/* Find @p refname in the remote's advertisement. */
static int ls_find(remote_transport *rt, git_remote *remote, const char *refname, int *present,
                   lease_oid *oid)
{
	const git_remote_head **heads;
	size_t n, i;

	*present = 0;
	memset(oid, 0, sizeof(*oid));
	if (git_remote_ls(&heads, &n, remote) < 0)
		return fail(rt, LEASE_ENET, "cannot list the remote's refs");
	for (i = 0; i < n; i++) {
		if (strcmp(heads[i]->name, refname) == 0) {
			*present = 1;
			lease__git_oid_from(oid, &heads[i]->oid);
			return 0;
		}
	}
	return 0;
}

/* A directory/file conflict on the remote for @p refname (issue 14, F10):
 * an advertised ref below it ("refs/leases/a/b" for "refs/leases/a") or at
 * one of its parent paths. 1 with @p other named, else 0 (also when the
 * remote cannot be listed). */
static int df_conflict_remote(remote_transport *rt, const char *refname, char *other, size_t olen)
{
	const git_remote_head **heads;
	git_remote *remote = NULL;
	size_t n, i, rl = strlen(refname);
	net_ctx ctx;
	int found = 0;

	ctx_init(&ctx, rt);
	if (connect_fetch(rt, &ctx, &remote) < 0)
		return 0;
	if (git_remote_ls(&heads, &n, remote) == 0) {
		for (i = 0; i < n && !found; i++) {
			const char *h = heads[i]->name;
			size_t hl = strlen(h);

			if ((hl > rl && strncmp(h, refname, rl) == 0 && h[rl] == '/') ||
			    (rl > hl && strncmp(refname, h, hl) == 0 && refname[hl] == '/')) {
				snprintf(other, olen, "%s", h);
				found = 1;
			}
		}
	}
	git_remote_free(remote);
	git_error_clear();
	return found;
}

/* Fetch @p spec on the connected @p remote into the cache. The cache refs
 * are negotiation hints only: failing to move one (another process holds its
 * lock) is not an error. */
static int fetch_spec(remote_transport *rt, net_ctx *ctx, git_remote *remote, const char *spec)
{
	git_fetch_options fo;
	char *specs[1];
	git_strarray arr;
	int err;

	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	init_callbacks(&fo.callbacks, ctx);
	proxy_auto(&fo.proxy_opts);
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	specs[0] = (char *)spec;
	arr.strings = specs;
	arr.count = 1;
	if ((err = git_remote_download(remote, &arr, &fo)) < 0)
		return map_error(rt, ctx, err, "cannot fetch from the remote");
	if (git_remote_update_tips(remote, &fo.callbacks, 0, GIT_REMOTE_DOWNLOAD_TAGS_NONE,
	                           "reflease fetch") < 0)
		git_error_clear();
	return 0;
}

/* "+<ref>:refs/reflease/cache/<ref without refs/>" */
static int cache_spec(char *out, size_t outlen, const char *ref)
{
	const char *tail = strncmp(ref, "refs/", 5) == 0 ? ref + 5 : ref;
	int n = snprintf(out, outlen, "+%s:" CACHE_PREFIX "%s", ref, tail);

	return n < 0 || (size_t)n >= outlen ? LEASE_EINVALID : 0;
}

/* One ls-remote of @p refname; with @p fetch, when its object is not cached,
 * fetch it on the same connection: *fetched = 1 when objects were copied,
 * *fetch_rc = the fetch's error (the ref may have moved meanwhile: the caller
 * reads again). */
static int ls_and_fetch(remote_transport *rt, const char *refname, int fetch, int *present,
                        lease_oid *oid, int *fetched, int *fetch_rc)
{
	git_remote *remote = NULL;
	net_ctx ctx;
	char spec[1024];
	int rc;

	*fetched = 0;
	*fetch_rc = 0;
	ctx_init(&ctx, rt);
	if ((rc = connect_fetch(rt, &ctx, &remote)) < 0)
		return rc;
	rc = ls_find(rt, remote, refname, present, oid);
	if (rc == 0 && fetch && *present && !object_cached(rt, oid)) {
		if ((rc = cache_spec(spec, sizeof(spec), refname)) < 0)
			lease__error_set(rt->errbuf, sizeof(rt->errbuf), "ref name too long: %s",
			                 refname);
		else if ((*fetch_rc = fetch_spec(rt, &ctx, remote, spec)) == 0)
			*fetched = 1;
	}
	git_remote_disconnect(remote);
	git_remote_free(remote);
	return rc;
}

/* The pause before read round @p round (> 0) of a ref that moved, on the
 * store options' clock (a test's virtual clock sleeps no real time). */
static void reread_pause(remote_transport *rt, int round)
{
	int64_t ms = (int64_t)25 << (round - 1 < 4 ? round - 1 : 4);

	(void)lease__env_sleep_ms(&rt->clock, lease__jittered_ms(ms), LEASE_SLEEP_FULL);
}

static int remote_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                           int *has_commit, lease_commit *commit_out)
{
	remote_transport *rt = R(t);
	int round, fetched, fetch_rc = 0, rc;

	git_error_clear(); /* no stale message from an earlier call */
	*present = 0;
	*has_commit = 0;
	memset(oid, 0, sizeof(*oid));
	for (round = 0; round < READ_ROUNDS; round++) {
		lease_oid again;
		int still = 0, unused, unused_rc;

		if (round > 0)
			reread_pause(rt, round);
		if ((rc = ls_and_fetch(rt, refname, 1, present, oid, &fetched, &fetch_rc)) < 0)
			return rc;
		if (!*present)
			return 0;
		if (fetch_rc < 0)
			continue; /* moved (or vanished) between the listing and the fetch? */
		if (fetched) {
			/* A copy: the ref must still hold the oid whose objects came. */
			if ((rc = ls_and_fetch(rt, refname, 0, &still, &again, &unused,
			                       &unused_rc)) < 0)
				return rc;
			if (!still || !lease_oid_equal(&again, oid))
				continue;
		}
		rc = remote_read_commit(t, commit_out, oid);
		if (rc == LEASE_ENOTFOUND) {
			lease__error_set(rt->errbuf, sizeof(rt->errbuf),
			                 "the fetch of %s did not bring its object", refname);
			return LEASE_ENET;
		}
		if (rc < 0)
			return rc;
		*has_commit = 1;
		return 0;
	}
	if (fetch_rc < 0)
		return fetch_rc; /* errbuf holds the fetch's error */
	lease__error_set(rt->errbuf, sizeof(rt->errbuf), "%s kept changing while it was read",
	                 refname);
	return LEASE_ENET;
}

/* wait_change: one ls-remote (the ref advertisement only, no fetch) every
 * REMOTE_POLL_MS (protocol.md §5 "Waiting", §9 "remote"). */
#define REMOTE_POLL_MS 2000
static int remote_probe(lease_transport *t, const char *refname, lease_probe *p)
{
	int fetched, fetch_rc;

	return ls_and_fetch(R(t), refname, 0, &p->present, &p->oid, &fetched, &fetch_rc);
}

/* read_ref_oid (transport.h, version 3): one ls-remote, no fetch. */
static int remote_read_ref_oid(lease_transport *t, const char *refname, int *present,
                               lease_oid *oid)
{
	int fetched, fetch_rc;

	git_error_clear(); /* no stale message from an earlier call */
	return ls_and_fetch(R(t), refname, 0, present, oid, &fetched, &fetch_rc);
}

static int remote_wait_change(lease_transport *t, const char *refname, int known_present,
                              const lease_oid *known_oid, int timeout_ms)
{
	return lease__poll_ref_change(t, &R(t)->clock, &R(t)->poll, remote_probe, refname,
	                              known_present, known_oid, timeout_ms, REMOTE_POLL_MS);
}

static int list_once(remote_transport *rt, lease_ref_list *out, const char *prefix, int *fetch_rc);

/* One listing; a failed fetch (a ref moved or vanished between the listing
 * and the fetch: upload-pack refuses objects no ref reaches) lists again. */
static int remote_list_refs(lease_transport *t, lease_ref_list *out, const char *prefix)
{
	int round, fetch_rc = 0, rc = 0;

	git_error_clear(); /* no stale message from an earlier call */
	for (round = 0; round < READ_ROUNDS; round++) {
		if (round > 0)
			reread_pause(R(t), round);
		if ((rc = list_once(R(t), out, prefix, &fetch_rc)) < 0 || fetch_rc == 0)
			return rc;
		lease_ref_list_clear(out);
	}
	return fetch_rc;
}

static int list_once(remote_transport *rt, lease_ref_list *out, const char *prefix, int *fetch_rc)
{
	lease_transport *t = &rt->base;
	const git_remote_head **heads;
	git_remote *remote = NULL;
	net_ctx ctx;
	char spec[1024];
	size_t n, i, plen = strlen(prefix);
	int need = 0, rc = 0;

	memset(out, 0, sizeof(*out));
	*fetch_rc = 0;
	ctx_init(&ctx, rt);
	if ((rc = connect_fetch(rt, &ctx, &remote)) < 0)
		return rc;
	if (git_remote_ls(&heads, &n, remote) < 0) {
		rc = fail(rt, LEASE_ENET, "cannot list the remote's refs");
		goto done;
	}
	for (i = 0; i < n; i++) {
		lease_oid oid;

		if (strncmp(heads[i]->name, prefix, plen) != 0)
			continue;
		lease__git_oid_from(&oid, &heads[i]->oid);
		if ((rc = lease_ref_list_push(out, heads[i]->name, &oid)) < 0)
			goto done;
		if (!object_cached(rt, &oid))
			need = 1;
	}
	/* One fetch of every ref under the prefix (a glob refspec; never *:*). */
	if (need && plen > 5 && prefix[plen - 1] == '/' && !strpbrk(prefix, "*?[\\:^~ ")) {
		int k = snprintf(spec, sizeof(spec), "+%s*:" CACHE_PREFIX "%s*", prefix,
		                 prefix + 5);
		if (k > 0 && (size_t)k < sizeof(spec) &&
		    (*fetch_rc = fetch_spec(rt, &ctx, remote, spec)) < 0)
			goto done;
	}
	for (i = 0; i < out->count; i++) {
		lease_ref_entry *e = &out->items[i];

		if (remote_read_commit(t, &e->commit, &e->oid) == 0) {
			e->has_commit = 1;
			if (e->commit.is_commit && e->commit.has_parent &&
			    remote_read_commit(t, &e->parent_commit, &e->commit.parent) == 0)
				e->has_parent_commit = 1;
			else
				lease_commit_clear(&e->parent_commit);
		} else {
			lease_commit_clear(&e->commit);
		}
	}
	rc = 0;
done:
	git_remote_disconnect(remote);
	git_remote_free(remote);
	if (rc < 0)
		lease_ref_list_clear(out);
	return rc;
}

/* Push @p new_oid (NULL = delete) to @p refname iff the remote advertises
 * @p expected there (zero = not advertised). Returns 0 (reported applied),
 * LEASE_ECAS / LEASE_EEXISTS (reported mismatch; outcome known), LEASE_EAUTH
 * (refused by a rule or a hook), LEASE_ENET (outcome unknown). */
static int push_update(remote_transport *rt, const char *refname, const lease_oid *expected,
                       const lease_oid *new_oid)
{
	char outref[128], nonce[17], spec[1024], exp_hex[LEASE_OID_HEXSZ + 1],
	        adv_hex[LEASE_OID_HEXSZ + 1];
	git_reference *tmp = NULL;
	git_remote *remote = NULL;
	git_push_options po;
	net_ctx ctx;
	char *specs[1];
	git_strarray arr;
	int mismatch = expected && lease_oid_is_zero(expected) ? LEASE_EEXISTS : LEASE_ECAS;
	int err, rc, n;

	git_error_clear(); /* no stale message from an earlier call */
	ctx_init(&ctx, rt);
	ctx.refname = refname;
	ctx.expected = *expected;
	ctx.creating = lease_oid_is_zero(expected);
	if (new_oid) {
		git_oid id;

		if (!object_cached(rt, new_oid))
			return fail(rt, LEASE_EINVALID, "the new oid is not in the local cache");
		if (lease_random_hex(nonce, 8, NULL) < 0)
			return fail(rt, LEASE_EINTERNAL, "no randomness for the push ref");
		snprintf(outref, sizeof(outref), OUT_PREFIX "%ld-%s", (long)getpid(), nonce);
		lease__git_oid_to(&id, new_oid);
		if (git_reference_create(&tmp, rt->cache, outref, &id, 1, NULL) < 0)
			return fail(rt, LEASE_EINTERNAL, "cannot create the push ref in the cache");
		n = snprintf(spec, sizeof(spec), "+%s:%s", outref, refname);
	} else {
		n = snprintf(spec, sizeof(spec), ":%s", refname);
	}
	if (n < 0 || (size_t)n >= sizeof(spec)) {
		rc = fail(rt, LEASE_EINVALID, "ref name too long");
		goto done;
	}
	if ((err = anon_remote(rt, &remote)) < 0) {
		rc = map_error(rt, &ctx, err, "invalid remote URL");
		goto done;
	}
	net_begin(rt);
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	init_callbacks(&po.callbacks, &ctx);
	proxy_auto(&po.proxy_opts);
	po.pb_parallelism = 1;
	specs[0] = spec;
	arr.strings = specs;
	arr.count = 1;
	err = git_remote_push(remote, &arr, &po);
	lease_oid_tohex(exp_hex, expected);
	lease_oid_tohex(adv_hex, &ctx.advertised);
	if (ctx.neg_aborted) {
		git_error_clear();
		lease__error_set(rt->errbuf, sizeof(rt->errbuf),
		                 "the remote advertises %s at %s, expected %s; nothing was sent",
		                 refname, lease_oid_is_zero(&ctx.advertised) ? "nothing" : adv_hex,
		                 ctx.creating ? "nothing" : exp_hex);
		rc = mismatch;
	} else if (err < 0) {
		rc = map_error(rt, &ctx, err, "push failed (outcome unknown)");
		if (rc == LEASE_ECONFIG && ctx.neg_called)
			rc = LEASE_ENET;
	} else if (!ctx.got_status) {
		lease__error_set(rt->errbuf, sizeof(rt->errbuf),
		                 "the remote sent no status for %s (outcome unknown)", refname);
		rc = LEASE_ENET;
	} else if (ctx.rejected) {
		int rule = contains(ctx.status, "hook declined") || contains(ctx.status, "deny") ||
		           contains(ctx.status, "protected") ||
		           contains(ctx.status, "not allowed") ||
		           contains(ctx.status, "permission");
		char other[256];

		lease__error_set(rt->errbuf, sizeof(rt->errbuf), "the remote rejected %s: %s",
		                 refname, ctx.status);
		rc = rule ? LEASE_EAUTH : mismatch;
		if (!rule && new_oid && df_conflict_remote(rt, refname, other, sizeof(other))) {
			lease__error_set(
			        rt->errbuf, sizeof(rt->errbuf),
			        "%s cannot be written: %s exists on the remote (git keeps refs "
			        "as files, so a ref cannot also be a directory of refs); rename "
			        "or delete %s",
			        refname, other, other);
			rc = LEASE_ECONFIG;
		}
	} else {
		rc = 0;
	}
done:
	git_remote_free(remote);
	if (tmp) {
		if (git_reference_delete(tmp) < 0)
			git_error_clear();
		git_reference_free(tmp);
	}
	if (rc == 0 && new_oid) {
		/* A hint for later fetches' negotiation; another process may hold it. */
		char cref[1024];
		git_reference *c = NULL;
		git_oid id;

		lease__git_oid_to(&id, new_oid);
		if (snprintf(cref, sizeof(cref), CACHE_PREFIX "%s",
		             strncmp(refname, "refs/", 5) == 0 ? refname + 5 : refname) <
		            (int)sizeof(cref) &&
		    git_reference_create(&c, rt->cache, cref, &id, 1, NULL) < 0)
			git_error_clear();
		git_reference_free(c);
	}
	return rc;
}

static int remote_create_ref(lease_transport *t, const char *refname, const lease_oid *new_oid)
{
	static const lease_oid zero;

	return push_update(R(t), refname, &zero, new_oid);
}

static int remote_replace_ref(lease_transport *t, const char *refname, const lease_oid *old_oid,
                              const lease_oid *new_oid)
{
	if (lease_oid_is_zero(old_oid))
		return fail(R(t), LEASE_EINVALID, "replace from the zero oid");
	return push_update(R(t), refname, old_oid, new_oid);
}

static int remote_delete_ref(lease_transport *t, const char *refname, const lease_oid *old_oid)
{
	if (lease_oid_is_zero(old_oid))
		return fail(R(t), LEASE_EINVALID, "delete from the zero oid");
	return push_update(R(t), refname, old_oid, NULL);
}

static const char *remote_last_error(lease_transport *t)
{
	return R(t)->errbuf[0] ? R(t)->errbuf : NULL;
}

static void remote_free(lease_transport *t)
{
	remote_transport *rt = R(t);

	if (!t)
		return;
	git_repository_free(rt->cache);
	free(rt->url);
	free(rt->git_url);
	if (rt->token) {
		explicit_bzero(rt->token, strlen(rt->token));
		free(rt->token);
	}
	free(rt);
}

/* ------------------------------------------------------- construction */

static int mkdir_p(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* @p dir (the store options' cache_dir; the CLI's $XDG_CACHE_HOME/reflease
 * or ~/.cache/reflease), else ~/.cache/reflease of the user database's home;
 * created 0700. */
static int cache_base(char *out, size_t outlen, const char *dir, char *err, size_t errlen)
{
	const char *home;
	struct passwd *pw;
	int n;

	if (dir && dir[0] == '/')
		n = snprintf(out, outlen, "%s", dir);
	else if (dir && *dir) {
		lease__error_set(err, errlen, "cache directory '%.300s' is not an absolute path",
		                 dir);
		return LEASE_ECONFIG;
	} else {
		home = (pw = getpwuid(getuid())) ? pw->pw_dir : NULL;
		if (!home || home[0] != '/') {
			lease__error_set(err, errlen,
			                 "no cache directory: set XDG_CACHE_HOME or HOME");
			return LEASE_ECONFIG;
		}
		n = snprintf(out, outlen, "%s/.cache/reflease", home);
	}
	if (n < 0 || (size_t)n >= outlen) {
		lease__error_set(err, errlen, "cache directory path too long");
		return LEASE_ECONFIG;
	}
	if (mkdir_p(out) < 0) {
		lease__error_set(err, errlen, "cannot create the cache directory %s: %s", out,
		                 strerror(errno));
		return LEASE_ECONFIG;
	}
	return 0;
}

/* Open (creating when needed) the cache repository for @p url. Concurrent
 * first uses each build a private directory and rename(2) it into place: one
 * wins, the others discard theirs. */
static int open_cache(git_repository **out, const char *url, const char *cache_dir, char *err,
                      size_t errlen)
{
	char base[3072], dir[3200], tmp[3300], hex[GIT_OID_HEXSZ + 1], nonce[17];
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	git_oid h;
	int rc;

	*out = NULL;
	if ((rc = cache_base(base, sizeof(base), cache_dir, err, errlen)) < 0)
		return rc;
	if (git_odb_hash(&h, url, strlen(url), GIT_OBJECT_BLOB) < 0) {
		lease__error_set(err, errlen, "cannot hash the remote URL%s%s", lease__git_sep(),
		                 lease__git_msg());
		return LEASE_EINTERNAL;
	}
	git_oid_tostr(hex, sizeof(hex), &h);
	snprintf(dir, sizeof(dir), "%s/%s.git", base, hex);
	if (git_repository_open_bare(out, dir) == 0)
		return 0;
	if (lease_random_hex(nonce, 8, NULL) < 0) {
		lease__error_set(err, errlen, "no randomness");
		return LEASE_EINTERNAL;
	}
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%s-%ld-%s", base, hex, (long)getpid(), nonce);
	if (git_repository_init(&repo, tmp, 1) < 0) {
		lease__error_set(err, errlen, "cannot create the cache repository in %s%s%s", base,
		                 lease__git_sep(), lease__git_msg());
		return LEASE_ECONFIG;
	}
	/* No gc of the cache by a git CLI passing by; no reflogs. */
	if (git_repository_config(&cfg, repo) < 0 || git_config_set_int32(cfg, "gc.auto", 0) < 0 ||
	    git_config_set_bool(cfg, "core.logAllRefUpdates", 0) < 0) {
		lease__error_set(err, errlen, "cannot configure the cache repository in %s%s%s",
		                 base, lease__git_sep(), lease__git_msg());
		git_config_free(cfg);
		git_repository_free(repo);
		nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		return LEASE_ECONFIG;
	}
	git_config_free(cfg);
	git_repository_free(repo);
	if (rename(tmp, dir) < 0) {
		int e = errno;

		nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		if (e != EEXIST && e != ENOTEMPTY) {
			lease__error_set(err, errlen, "cannot create the cache repository %s: %s",
			                 dir, strerror(e));
			return LEASE_ECONFIG;
		}
	}
	if (git_repository_open_bare(out, dir) < 0) {
		lease__error_set(err, errlen, "cannot open the cache repository %s%s%s", dir,
		                 lease__git_sep(), lease__git_msg());
		return LEASE_ECONFIG;
	}
	return 0;
}

/* set_deadline (version 5): the running operation ends @p ms from now on
 * lease__mono_ms() (libgit2's own network calls are bounded by the real
 * clock), which bounds libgit2's connections, reads and writes too; <= 0
 * clears it. */
static void remote_set_deadline(lease_transport *t, int64_t ms)
{
	R(t)->op_deadline_ms = ms > 0 ? lease__mono_ms() + ms : 0;
}

/* The transport's calls and figures (protocol.md §4, §9). */
static const lease_transport remote_vtable = {
        .version = LEASE_TRANSPORT_VERSION,
        .kind = "remote",
        .skew_margin_s = 30,
        .ttl_min_s = 60,
        .verify_window_ms = 10000,
        .write_commit = remote_write_commit,
        .create_ref = remote_create_ref,
        .replace_ref = remote_replace_ref,
        .delete_ref = remote_delete_ref,
        .read_ref = remote_read_ref,
        .read_commit = remote_read_commit,
        .list_refs = remote_list_refs,
        .last_error = remote_last_error,
        .free = remote_free,
        .wait_change = remote_wait_change,
        .read_ref_oid = remote_read_ref_oid,
        .set_deadline = remote_set_deadline,
};

/* A file:// remote is the local transport with the remote's figures. */
static void remote_figures(lease_transport *t)
{
	t->kind = remote_vtable.kind;
	t->skew_margin_s = remote_vtable.skew_margin_s;
	t->ttl_min_s = remote_vtable.ttl_min_s;
	t->verify_window_ms = remote_vtable.verify_window_ms;
}

/* http(s)://USER@HOST/...: libgit2 gets the URL without USER (which it
 * would first send with an empty password), the credential callback names
 * USER with the token (issue 23). Other schemes keep their URL (ssh needs
 * its user). */
static int split_url_user(remote_transport *rt)
{
	const char *p = strstr(rt->url, "://"), *end, *at;
	size_t n;

	if (strncmp(rt->url, "http://", 7) != 0 && strncmp(rt->url, "https://", 8) != 0) {
		rt->git_url = strdup(rt->url);
		return rt->git_url ? 0 : LEASE_ENOMEM;
	}
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (!at) {
		rt->git_url = strdup(rt->url);
		return rt->git_url ? 0 : LEASE_ENOMEM;
	}
	n = (size_t)(at - p);
	if (n >= sizeof(rt->url_user))
		return LEASE_EINVALID;
	memcpy(rt->url_user, p, n);
	rt->url_user[n] = '\0';
	if (!(rt->git_url = malloc(strlen(rt->url) - n)))
		return LEASE_ENOMEM;
	snprintf(rt->git_url, strlen(rt->url) - n, "%.*s%s", (int)(p - rt->url), rt->url, at + 1);
	return 0;
}

/* https: trust the certificate authorities github: does (issue 24 #1): the
 * store options' ca_bundle and ca_dir (the CLI's --ca-bundle /
 * REFLEASE_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR); else
 * libgit2's default. */
static int trust_ca(const lease_store_options *opts, char *err, size_t errlen)
{
	const char *file = opts && opts->ca_bundle && *opts->ca_bundle ? opts->ca_bundle : NULL;
	const char *dir = opts && opts->ca_dir && *opts->ca_dir ? opts->ca_dir : NULL;

	if (!file && !dir)
		return 0;
	if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file, dir) < 0) {
		lease__error_set(err, errlen, "cannot use the CA bundle %s%s%s", file ? file : dir,
		                 lease__git_sep(), lease__git_msg());
		return LEASE_ECONFIG;
	}
	return 0;
}

int lease__remote_transport_new(lease_transport **out, const char *url,
                                const lease_store_options *opts, char *err, size_t errlen)
{
	static const char *const schemes[] = {"git://", "http://", "https://", "ssh://"};
	remote_transport *rt;
	const char *token = opts ? opts->git_token : NULL;
	size_t i;
	int rc, known = 0;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if ((rc = lease__git_global_init()) < 0) {
		lease__error_set(err, errlen, "cannot initialise libgit2%s%s", lease__git_sep(),
		                 lease__git_msg());
		return rc;
	}
	if (!url || !*url) {
		lease__error_set(err, errlen,
		                 "remote: needs a URL (file://, git://, http(s)://, ssh://)");
		return LEASE_EINVALID;
	}
	if (url_has_password(url)) {
		lease__error_set(err, errlen,
		                 "remote: URL must not embed a password; use "
		                 "REFLEASE_GIT_TOKEN (https) or ssh-agent (ssh)");
		return LEASE_EINVALID;
	}
	if (strncmp(url, "file://", 7) == 0) {
		char path[4096];

		if (file_url_path(path, sizeof(path), url) < 0) {
			lease__error_set(err, errlen,
			                 "remote: invalid file URL (expected file:///PATH)");
			return LEASE_EINVALID;
		}
		if ((rc = lease__local_transport_new(out, path, opts, err, errlen)) < 0)
			return rc;
		remote_figures(*out);
		return 0;
	}
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		known |= strncmp(url, schemes[i], strlen(schemes[i])) == 0;
	if (!known || !url[strcspn(url, ":") + 3]) {
		snprintf(
		        err, errlen,
		        "remote: unsupported URL (expected file://, git://, http(s):// or ssh://)");
		return LEASE_EINVALID;
	}
	if (!(rt = calloc(1, sizeof(*rt))) || !(rt->url = strdup(url))) {
		free(rt);
		return LEASE_ENOMEM;
	}
	if (token && *token && !(rt->token = strdup(token))) {
		remote_free(&rt->base);
		return LEASE_ENOMEM;
	}
	if (opts) {
		rt->clock = opts->clock;
		rt->log = opts->log;
		rt->log_payload = opts->log_payload;
		rt->log_level = opts->log_level;
	}
	if ((rc = open_cache(&rt->cache, url, opts ? opts->cache_dir : NULL, err, errlen)) < 0) {
		remote_free(&rt->base);
		return rc;
	}
	if ((rc = split_url_user(rt)) < 0) {
		remote_free(&rt->base);
		return rc;
	}
	if (strncmp(url, "https://", 8) == 0 && (rc = trust_ca(opts, err, errlen)) < 0) {
		remote_free(&rt->base);
		return rc;
	}
	rt->base = remote_vtable;
	*out = &rt->base;
	return 0;
}
