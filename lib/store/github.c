/* The GitHub transport (`github:OWNER/REPO`, protocol.md §3, §4, §9 github):
 * commit objects through the git data API, creates through POST /git/refs,
 * every replace and delete through GraphQL updateRefs with a beforeOid (the
 * only true compare-and-swap GitHub offers), reads through one GraphQL query
 * (REST as the fallback). This file knows refs, oids and commits, never
 * phases or tokens; lib/lease/primitives.c validates every post-state. */
#include "backend.h"
#include "gh_budget.h"
#include "http.h"
#include "reflease/primitives.h" /* LEASE_SET_MAX: the members a set keeper re-reads */
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EMPTY_TREE        "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#define ZERO_OID          "0000000000000000000000000000000000000000"
#define GQL_BATCH         100   /* aliased object look-ups per GraphQL request */
#define GH_WRITTEN        4     /* commits this transport wrote, kept for its listings */
#define GQL_REFS_BATCH    50    /* aliased ref look-ups per GraphQL request (read_refs) */
#define SNAP_PREFIX_MAX   80    /* bytes of the directory an absence listing covers */
#define REQ_MAX_MS        30000 /* bound on one request inside the operation timeout */
#define MSG_EXCERPT       200   /* bytes of a server message quoted in an error */
#define GH_POLL_MS        2000  /* a waiter's conditional read of the ref, every (jittered) */
#define BURST_GAP_MS      1000  /* between content-creating requests in a burst */
#define PROGRESS_FIRST_MS 3000  /* retrying this long: say so at -v (issue 23) */
#define PROGRESS_MS       10000 /* then again every */

/* What GraphQL has shown about refs/<ns>/ (protocol.md §9: REST is the
 * fallback where GraphQL does not see the namespace). GraphQL's view of refs
 * outside heads/ and tags/ is undocumented: only a ref it returns (the one
 * asked for) is evidence; an absence is always confirmed by REST (issue 15). */
enum gql_sight { GQL_UNKNOWN = 0, GQL_BLIND = 2 };

/* Refs whose last conditional read is kept: every member of a set (its
 * keeper's re-reads) and one more (a waiter's). */
#define GH_PROBES (LEASE_SET_MAX + 1)

typedef struct gh_transport {
	lease_transport base;
	lease_http *http;
	char *api;            /* REST base, no trailing slash (GHES: .../api/v3) */
	char repo_base[1024]; /* <api>/repos/O/R, or where a 301 said it moved (issue 15) */
	char *graphql;        /* GraphQL endpoint */
	char owner[64];
	char repo[128];
	char repo_id[128]; /* node id, fetched once */
	int sight;
	int probed;         /* the schema probe has ridden on a read */
	int no_update_refs; /* the schema probe found no updateRefs */
	/* The REST listing that confirmed an absence (refs/<ns>*: the namespace and
	 * its archives), kept for the archive listing that follows at once. */
	lease_ref_list snap;
	lease_ref_list snap_absent; /* the refs it confirmed absent, each served once */
	char snap_prefix[SNAP_PREFIX_MAX];
	int64_t snap_ms;
	int64_t last_write_ms;  /* monotonic: the last content-creating request ended */
	int burst;              /* a burst began (lease__store_pace): every write is paced */
	int64_t paced_ms;       /* waited between the writes of one operation of a burst */
	int64_t op_deadline_ms; /* monotonic: the running operation's end (0 = none) */
	char *token_file;       /* the options' github_token_file: re-read on a 401 */
	int64_t date;           /* latest Date header, s */
	int64_t date_ms;        /* monotonic ms when it arrived */
	int timeout_s;
	int nohdr_waits;          /* consecutive rate-limit waits without a header */
	int64_t limited_until_ms; /* monotonic: known rate limited until then */
	char limited_why[300];    /* the answer that said so */
	/* the validators of the refs read last (read_ref_oid, wait_change), one
	 * each: a set's keeper re-reads its members in turn, each conditionally
	 * on its own ETag (probe_for()) */
	lease_probe poll[GH_PROBES];
	uint64_t poll_used[GH_PROBES]; /* when each was last used (poll_tick) */
	uint64_t poll_tick;
	lease_probe lpoll; /* a waiter's last conditional listing (wait_refs_change) */
	/* the commits written last (write_commit), as a read would give them: a
	 * listing that shows one is not sent to GraphQL for it (issue 39 item 3:
	 * a fair waiter's queue reads cost the listing alone) */
	lease_commit written[GH_WRITTEN];
	size_t written_next;
	lease_clock clock; /* the store options' clock: every wait, deadline and Date's age */
	char *ca_file;     /* the options' ca_bundle (messages), or NULL */
	char *ca_from;     /* how messages name it (ca_bundle_source), or NULL */
	char *ca_dir;      /* the options' ca_dir, or NULL */
	lease_random random;
	lease_log_fn log;
	void *log_payload;
	int log_level;
	size_t list_peak; /* most refs a listing held at once (lease__github_listing_peak) */
	lease_gh_budgets budgets; /* the x-ratelimit-* budgets answers announced (issue 39) */
	char errmsg[1024];
} gh_transport;

/* One exchange's outcome after retries. */
typedef struct gh_reply {
	lease_http_response r;
	json_t *json; /* parsed body, or NULL */
} gh_reply;

static void reply_clear(gh_reply *rp)
{
	lease__http_response_clear(&rp->r);
	json_decref(rp->json);
	rp->json = NULL;
}

/* Record why a call failed (lease__error_set(), the one error setter, on the
 * transport's message) and evaluate to @p code. */
#define gh_err(g, code, ...)                                                                       \
	(lease__error_set((g)->errmsg, sizeof((g)->errmsg), __VA_ARGS__), (code))

__attribute__((format(printf, 3, 4))) static void gh_log(gh_transport *g, int level,
                                                         const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lease__vlog(g->log, g->log_payload, g->log_level, level, fmt, ap);
	va_end(ap);
}

/* Every wait of this transport: the store options' clock (a test's virtual
 * time, or nanosleep). */
static void sleep_ms(gh_transport *g, int64_t ms)
{
	lease__env_sleep_ms(&g->clock, ms, LEASE_SLEEP_FULL);
}

static int64_t mono_ms(const gh_transport *g)
{
	return lease__env_mono_ms(&g->clock);
}

/* A random factor in [1, 1 + spread) applied to @p ms. */
static int64_t jitter(gh_transport *g, int64_t ms, double spread)
{
	unsigned char b[2] = {0, 0};

	if (lease_random_bytes(&g->random, b, sizeof(b)) < 0)
		return ms;
	return ms + (int64_t)((double)ms * spread * ((b[0] << 8 | b[1]) / 65536.0));
}

/* ---- time ---------------------------------------------------------------- */

/* "YYYY-MM-DDTHH:MM:SS(Z|±HH:MM)" (fractions ignored) → seconds; -1 if malformed. */
static int64_t parse_iso8601(const char *s)
{
	int y, mo, d, h, mi, sec, n = 0, oh = 0, om = 0;
	int64_t t;
	const char *p;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	t = lease__days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	p = s + n;
	if (*p == '.')
		while (*++p >= '0' && *p <= '9')
			;
	if (*p == 'Z' && p[1] == '\0')
		return t;
	if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &oh, &om) == 2)
		return *p == '+' ? t - (oh * 3600 + om * 60) : t + (oh * 3600 + om * 60);
	return -1;
}

static void format_iso8601(char out[32], int64_t when)
{
	time_t tt = (time_t)when;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* protocol.md §4: the Date header of the latest response plus monotonic time since. */
static int64_t server_now(gh_transport *g)
{
	if (g->date_ms <= 0)
		return (int64_t)time(NULL);
	return g->date + (mono_ms(g) - g->date_ms) / 1000;
}

/* ---- messages -------------------------------------------------------------- */

/* A server-supplied message, trimmed to one printable line (never trusted text). */
static void excerpt(char *out, size_t outlen, const char *msg)
{
	size_t i, j = 0;

	if (!msg)
		msg = "";
	for (i = 0; msg[i] && j + 1 < outlen && i < MSG_EXCERPT; i++) {
		unsigned char c = (unsigned char)msg[i];
		out[j++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	out[j] = '\0';
}

static const char *rest_message(const gh_reply *rp)
{
	json_t *m = rp->json ? json_object_get(rp->json, "message") : NULL;

	return json_is_string(m) ? json_string_value(m) : "";
}

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle), i, k;

	for (i = 0; hay && hay[i]; i++) {
		for (k = 0; k < n && hay[i + k]; k++) {
			char a = hay[i + k], b = needle[k];
			if (a >= 'A' && a <= 'Z')
				a = (char)(a - 'A' + 'a');
			if (a != b)
				break;
		}
		if (k == n)
			return 1;
	}
	return 0;
}

/* Namespace of a full ref name ("refs/<ns>/..."), for messages. */
static void ref_ns(char out[64], const char *refname)
{
	const char *p = strncmp(refname, "refs/", 5) == 0 ? refname + 5 : refname;
	size_t n = strcspn(p, "/");

	if (n > 63)
		n = 63;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* ---- the request loop ------------------------------------------------------ */

/* The first GraphQL error of type @p type, or NULL. */
static json_t *gql_error_of_type(json_t *json, const char *type)
{
	json_t *errs = json ? json_object_get(json, "errors") : NULL, *e;
	size_t i;

	json_array_foreach(errs, i, e)
	{
		json_t *ty = json_object_get(e, "type");
		json_t *ext = json_object_get(e, "extensions");
		json_t *code = ext ? json_object_get(ext, "code") : NULL;
		if ((json_is_string(ty) && strcmp(json_string_value(ty), type) == 0) ||
		    (json_is_string(code) && strcmp(json_string_value(code), type) == 0))
			return e;
	}
	return NULL;
}

static const char *gql_first_message(json_t *json)
{
	json_t *errs = json ? json_object_get(json, "errors") : NULL;
	json_t *m = json_object_get(json_array_get(errs, 0), "message");

	return json_is_string(m) ? json_string_value(m) : "";
}

/* The first GraphQL error that says "rate limited", in any of the shapes
 * GitHub sends (issue 15 item 2): `type` RATE_LIMITED (documented) or
 * RATE_LIMIT with `code` graphql_rate_limit (octokit/plugin-throttling.js#824
 * and #848, githubkit#271), the code under `extensions`, or no type at all
 * and only a message saying so. NULL when none. */
static json_t *gql_rate_limit_error(json_t *json)
{
	static const char *const kinds[] = {"RATE_LIMITED", "RATE_LIMIT", "graphql_rate_limit"};
	json_t *errs = json ? json_object_get(json, "errors") : NULL, *e;
	size_t i, k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if ((e = gql_error_of_type(json, kinds[k])))
			return e;
	json_array_foreach(errs, i, e)
	{
		json_t *code = json_object_get(e, "code"), *m = json_object_get(e, "message");
		if ((json_is_string(code) &&
		     strcmp(json_string_value(code), "graphql_rate_limit") == 0) ||
		    (json_is_string(m) && contains_ci(json_string_value(m), "rate limit")))
			return e;
	}
	return NULL;
}

/* 1 when the response is a rate-limit refusal (GitHub: 429; 403 with
 * retry-after, or with x-ratelimit-remaining 0, or a secondary-limit body —
 * REST `message` or GraphQL `errors[]` alone; GraphQL: a rate-limit error
 * inside a 200, typed or not). GitHub applied nothing: safe to resend. */
static int is_rate_limited(const gh_reply *rp, int graphql)
{
	long st = rp->r.status;

	if (st == 429)
		return 1;
	if (st == 403)
		return rp->r.retry_after >= 0 || rp->r.rl_remaining == 0 ||
		       contains_ci(rest_message(rp), "rate limit") ||
		       /* GitHub's older secondary-limit wording ("You have triggered
		        * an abuse detection mechanism", the word octokit's
		        * plugin-throttling matches: /\babuse\b/i), issue 24 #5 */
		       contains_ci(rest_message(rp), "abuse") ||
		       gql_rate_limit_error(rp->json) != NULL;
	if (graphql && st == 200)
		return gql_rate_limit_error(rp->json) != NULL;
	return 0;
}

/* 1 when a GraphQL 200 carries an error GitHub produces for a transient
 * server-side failure ("Something went wrong while executing your query.
 * This may be the result of a timeout", type INTERNAL): worth a retry for a
 * read, an unknown outcome for a mutation. */
static int gql_transient(json_t *json)
{
	json_t *errs = json ? json_object_get(json, "errors") : NULL, *e;
	size_t i;

	json_array_foreach(errs, i, e)
	{
		json_t *ty = json_object_get(e, "type"), *m = json_object_get(e, "message");
		const char *msg = json_is_string(m) ? json_string_value(m) : "";
		if ((json_is_string(ty) &&
		     (strcmp(json_string_value(ty), "INTERNAL") == 0 ||
		      strcmp(json_string_value(ty), "SERVICE_UNAVAILABLE") == 0)) ||
		    contains_ci(msg, "went wrong") || contains_ci(msg, "timeout") ||
		    contains_ci(msg, "timed out"))
			return 1;
	}
	return 0;
}

/* How long to wait before retrying a rate-limited request, ms (F24:
 * retry-after, else x-ratelimit-reset, else 60 s then exponential backoff). */
static int64_t rate_limit_wait_ms(gh_transport *g, const gh_reply *rp)
{
	int64_t wait;

	/* Header values are clamped to a day (any wait past the operation
	 * timeout fails the same way) so that no value can overflow (issue 8,
	 * found by tests/fuzz/fuzz_github.c). */
	if (rp->r.retry_after >= 0) {
		g->nohdr_waits = 0;
		wait = rp->r.retry_after > 0 ? rp->r.retry_after : 1;
		return (wait < 86400 ? wait : 86400) * 1000;
	}
	if (rp->r.rl_remaining == 0 && rp->r.rl_reset > 0) {
		g->nohdr_waits = 0;
		wait = rp->r.rl_reset - server_now(g) + 1;
		wait = wait < 1 ? 1 : wait > 86400 ? 86400 : wait;
		return wait * 1000;
	}
	wait = 60000LL << (g->nohdr_waits < 6 ? g->nohdr_waits : 6);
	g->nohdr_waits++;
	return jitter(g, wait, 0.25);
}

/* "rate limited by GitHub (HTTP 200, GraphQL RATE_LIMIT: <message>)". */
static void rate_limit_what(char *out, size_t outlen, const gh_reply *rp, int graphql)
{
	json_t *e = graphql || rp->r.status == 403 ? gql_rate_limit_error(rp->json) : NULL;
	json_t *ty = json_object_get(e, "type"), *m = json_object_get(e, "message");
	char msg[MSG_EXCERPT + 1];

	excerpt(msg, sizeof(msg), json_is_string(m) ? json_string_value(m) : rest_message(rp));
	snprintf(out, outlen, "rate limited by GitHub (HTTP %ld%s%s%s%s)", rp->r.status,
	         e ? ", GraphQL " : "",
	         e ? (json_is_string(ty) ? json_string_value(ty) : "error") : "",
	         msg[0] ? ": " : "", msg);
}

/* Path (for logs): the URL without scheme and host. */
static const char *url_path(const char *url)
{
	const char *p = strstr(url, "://");

	p = p ? strchr(p + 3, '/') : NULL;
	return p ? p : url;
}

#define MAX_REDIRECTS 3

/*
 * A REST answer 301/302/307/308 (a renamed or transferred repository: 301
 * for GET, 307 otherwise, as recorded in @octokit/fixtures
 * "rename-repository"): GitHub's documented rule is to repeat the request
 * verbatim at `Location`. It is followed only under the API base URL — the
 * same host, where the token belongs; anywhere else the request (and the
 * token) is not sent and the move is explained (78). A 301/308 also moves
 * every later request of this transport (the repository's new place). On 0,
 * @p next holds the URL to repeat the request at.
 */
static int redirect_target(gh_transport *g, const gh_reply *rp, const char *url, char *next,
                           size_t nextlen)
{
	const char *loc = rp->r.location;
	size_t alen = strlen(g->api), blen = strlen(g->repo_base);
	char origin[512];

	if (!loc[0])
		return gh_err(g, LEASE_ECONFIG,
		              "GitHub answered HTTP %ld without a Location for %s/%s: the "
		              "repository seems to have moved; point the store at its new name "
		              "(github:OWNER/REPO)",
		              rp->r.status, g->owner, g->repo);
	if (loc[0] == '/') { /* relative: on the API's own origin */
		const char *p = strstr(g->api, "://");
		size_t on =
		        p ? (size_t)(strchr(p + 3, '/') ? strchr(p + 3, '/') - g->api : (long)alen)
		          : 0;
		snprintf(origin, sizeof(origin), "%.*s", (int)on, g->api);
	} else {
		origin[0] = '\0';
	}
	if ((size_t)snprintf(next, nextlen, "%s%s", origin, loc) >= nextlen ||
	    strncmp(next, g->api, alen) != 0 || next[alen] != '/')
		return gh_err(g, LEASE_ECONFIG,
		              "GitHub says the repository %s/%s moved (HTTP %ld to %.300s): not "
		              "followed outside %s (the request carries the token); point the "
		              "store at the repository's new place (github:OWNER/REPO, "
		              "GITHUB_API_URL)",
		              g->owner, g->repo, rp->r.status, loc, g->api);
	if ((rp->r.status == 301 || rp->r.status == 308) && strncmp(url, g->repo_base, blen) == 0 &&
	    url[blen] == '/') {
		size_t sl = strlen(url + blen), nl = strlen(next);
		if (nl > sl && strcmp(next + nl - sl, url + blen) == 0 &&
		    nl - sl < sizeof(g->repo_base)) {
			gh_log(g, LEASE_LOG_WARN,
			       "github: repository %s/%s moved (HTTP %ld) to %.*s: following; "
			       "name the store by its new name",
			       g->owner, g->repo, rp->r.status, (int)(nl - sl), next);
			snprintf(g->repo_base, sizeof(g->repo_base), "%.*s", (int)(nl - sl), next);
		}
	}
	return 0;
}

static void wipe_buf(char *p, size_t n)
{
	volatile char *v = p;

	while (n--)
		*v++ = 0;
}

/* The host of @p url, for messages. */
static void url_host(char *out, size_t outlen, const char *url)
{
	const char *p = strstr(url, "://");
	size_t n;

	p = p ? p + 3 : url;
	n = strcspn(p, "/?#");
	snprintf(out, outlen, "%.*s", (int)(n < outlen ? n : outlen - 1), p);
}

/* A certificate that does not verify (issue 24 #1): a configuration error,
 * reported at once naming the host and libcurl's reason; never retried. */
static int tls_refused(gh_transport *g, const char *url, const char *why)
{
	char host[256];
	const char *file = g->ca_file, *dir = g->ca_dir;

	url_host(host, sizeof(host), url);
	if (file || dir)
		return gh_err(g, LEASE_ECONFIG,
		              "TLS: the certificate of %s does not verify against %s%s%s%s%s (%s)",
		              host, file ? (g->ca_from ? g->ca_from : "the CA bundle ") : "",
		              file && g->ca_from ? "=" : "", file ? file : "",
		              dir ? (file ? " and the CA directory " : "the CA directory ") : "",
		              dir ? dir : "", why);
	return gh_err(g, LEASE_ECONFIG,
	              "TLS: the certificate of %s does not verify against the system's "
	              "certificate authorities (%s): for a private CA (GHES, a TLS-inspecting "
	              "proxy) name its bundle with --ca-bundle FILE or SSL_CERT_FILE",
	              host, why);
}

/* A proxy answering 407, or refusing the tunnel by its rules (403; issue 24
 * #5): a configuration error, at once. */
static int proxy_refused(gh_transport *g, const char *url, long code)
{
	char host[256];

	url_host(host, sizeof(host), url);
	if (code != 407)
		return gh_err(g, LEASE_ECONFIG,
		              "the proxy (HTTPS_PROXY) refused the tunnel to %s (HTTP %ld to "
		              "CONNECT): let the proxy through to it, or set NO_PROXY",
		              host, code);
	return gh_err(g, LEASE_ECONFIG,
	              "the proxy between here and %s asks for credentials (HTTP 407 Proxy "
	              "Authentication Required): put them into HTTPS_PROXY "
	              "(http://USER:PASSWORD@PROXY:PORT) or use a proxy that lets this host "
	              "through",
	              host);
}

/* On a 401: read REFLEASE_GITHUB_TOKEN_FILE again; 1 when it now holds
 * another token, which the client sends from now on (issue 24 #6). */
static int reread_token(gh_transport *g)
{
	char buf[512], err[200];
	FILE *f;
	size_t n;
	int changed = 0;

	if (!g->token_file || !(f = fopen(g->token_file, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (n && !lease__http_token_is(g->http, buf) &&
	    lease__http_set_token(g->http, buf, err, sizeof(err)) == 0) {
		gh_log(g, LEASE_LOG_INFO,
		       "github: 401 with the token read before; %s holds another one now: "
		       "retrying with it",
		       g->token_file);
		changed = 1;
	}
	wipe_buf(buf, sizeof(buf));
	return changed;
}

/* A non-idempotent request that may have applied: LEASE_ENET with "WHAT: the
 * outcome is unknown" (settled by re-reading, §5); @p rp is cleared. */
__attribute__((format(printf, 3, 4))) static int outcome_unknown(gh_transport *g, gh_reply *rp,
                                                                 const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	reply_clear(rp);
	return gh_err(g, LEASE_ENET, "%s: the outcome is unknown", what);
}

/* A rate-limited answer @p rp: wait it out (0: try again), or
 * LEASE_ERATELIMIT when the wait would end past @p deadline_ms (the limit is
 * remembered: nothing is sent before it resets). @p last receives what
 * limited it. */
static int rate_limit_pause(gh_transport *g, gh_reply *rp, int graphql, int64_t deadline_ms,
                            char *last, size_t lastlen)
{
	int64_t wait = rate_limit_wait_ms(g, rp);
	int rc;

	rate_limit_what(last, lastlen, rp, graphql);
	if (mono_ms(g) + wait > deadline_ms) {
		g->limited_until_ms = mono_ms(g) + wait;
		snprintf(g->limited_why, sizeof(g->limited_why), "%s", last);
		rc = gh_err(g, LEASE_ERATELIMIT,
		            "%s; the next attempt would be in %lld s, past the operation's end "
		            "(--timeout %d s, or the --wait)",
		            last, (long long)((wait + 999) / 1000), g->timeout_s);
		reply_clear(rp);
		return rc;
	}
	gh_log(g, LEASE_LOG_WARN, "github: %s; retrying in %lld s", last,
	       (long long)((wait + 999) / 1000));
	sleep_ms(g, wait);
	return 0;
}

/* What every answer @p rp to @p url says first: its Date (the store's clock);
 * a TLS failure or a proxy's demand for credentials ends the exchange
 * (@return its error, @p rp cleared), else 0. */
static int answer_first(gh_transport *g, gh_reply *rp, const char *url)
{
	int rc;

	if (rp->r.result == LEASE_HTTP_OK && rp->r.date >= 0) {
		g->date = rp->r.date;
		g->date_ms = rp->r.date_mono_ms;
	}
	if (rp->r.result == LEASE_HTTP_OK) {
		char bm[512];

		if (lease__gh_budget_note(&g->budgets, &rp->r, g->owner, g->repo, bm, sizeof(bm)))
			gh_log(g, LEASE_LOG_WARN, "%s", bm);
	}
	if (rp->r.tls_failed) {
		rc = tls_refused(g, url, rp->r.error);
		reply_clear(rp);
		return rc;
	}
	if (rp->r.proxy_auth || (rp->r.result == LEASE_HTTP_OK && rp->r.status == 407)) {
		long code = rp->r.proxy_auth ? rp->r.proxy_auth : 407;
		reply_clear(rp);
		return proxy_refused(g, url, code);
	}
	return 0;
}

/* A REST redirect @p rp: *@p url becomes where it points (repeated verbatim
 * there, in one of @p moved), at most MAX_REDIRECTS hops (*@p hops). */
static int follow_redirect(gh_transport *g, gh_reply *rp, const char *method, const char **url,
                           char (*moved)[1024], int *hops)
{
	int rc;

	if (++*hops > MAX_REDIRECTS)
		rc = gh_err(g, LEASE_ECONFIG, "GitHub redirected %s %s more than %d times", method,
		            url_path(*url), MAX_REDIRECTS);
	else
		rc = redirect_target(g, rp, *url, moved[*hops % 2], sizeof(moved[0]));
	reply_clear(rp);
	if (rc == 0)
		*url = moved[*hops % 2];
	return rc;
}

/* The retries of one exchange: the backoff, when they began, the last
 * progress line, and whether the last attempt has been made. */
typedef struct retry_state {
	int64_t backoff, start, told;
	int final;
} retry_state;

/* After a failed attempt (@p last says why): the progress line at -v once the
 * retries have lasted a few seconds, then every PROGRESS_MS (issue 23), and
 * the backoff — but a last attempt with half a second left (once: on a
 * virtual clock no time passes while a request is sent). @return 0 to try
 * again, 1 when no time is left. */
static int retry_pause(gh_transport *g, retry_state *rb, const char *method, const char *url,
                       const char *last, int64_t deadline_ms)
{
	int64_t now = mono_ms(g), wait;

	if (now - rb->start >= PROGRESS_FIRST_MS && now - rb->told >= PROGRESS_MS) {
		rb->told = now;
		gh_log(g, LEASE_LOG_INFO,
		       "github: no answer from GitHub for %lld s (%s); retrying for another %lld s "
		       "(--timeout %d)",
		       (long long)((now - rb->start) / 1000), last,
		       (long long)((deadline_ms - now) / 1000), g->timeout_s);
	}
	if (rb->final)
		return 1;
	wait = jitter(g, rb->backoff, 0.5);
	if (now + wait + 500 > deadline_ms) {
		wait = deadline_ms - now - 500;
		rb->final = 1;
	}
	if (wait < 0)
		return 1;
	gh_log(g, LEASE_LOG_DEBUG, "github: %s %s failed (%s); retrying in %lld ms", method,
	       url_path(url), last, (long long)wait);
	sleep_ms(g, wait);
	if (rb->backoff < 8000)
		rb->backoff *= 2;
	return 0;
}

/* One exchange of gh_exchange(): the request, its deadline, the retries'
 * state and what the last failed attempt said. */
typedef struct gh_xchg {
	const char *method, *url, *body;
	int idempotent, graphql;
	int64_t deadline_ms;
	retry_state rb;
	int attempt, limited, hops, rotated;
	char last[300], moved[2][1024];
} gh_xchg;

/* What an answer asks of the exchange (xchg_judge()). */
enum { XCHG_DONE = 0, XCHG_AGAIN, XCHG_RETRY };

/* Before an attempt: an operation whose time is up sends nothing more, and a
 * known rate limit is waited out (never send before it resets). @return 0 to
 * send, 1 when the time is up after an attempt, else the error. */
static int xchg_gate(gh_transport *g, gh_xchg *x)
{
	int64_t now = mono_ms(g);

	if (now >= x->deadline_ms && x->attempt > 0)
		return 1;
	if (now >= x->deadline_ms)
		return gh_err(g, LEASE_ENET,
		              "the operation timeout (%d s, --timeout) ran out before %s %s was "
		              "sent",
		              g->timeout_s, x->method, url_path(x->url));
	if (g->limited_until_ms > now) {
		if (g->limited_until_ms > x->deadline_ms)
			return gh_err(g, LEASE_ERATELIMIT,
			              "%s: limited for another %lld s, past the operation's end "
			              "(--timeout %d s, or the --wait)",
			              g->limited_why,
			              (long long)((g->limited_until_ms - now + 999) / 1000),
			              g->timeout_s);
		sleep_ms(g, g->limited_until_ms - now);
	}
	return 0;
}

/* Send one attempt: it gets what is left of the operation (REQ_MAX_MS at
 * most, half a second at least). */
static int xchg_send(gh_transport *g, gh_xchg *x, gh_reply *rp)
{
	int64_t left = x->deadline_ms - mono_ms(g);
	int rc;

	x->attempt++;
	reply_clear(rp);
	rc = lease__http_request(
	        g->http, &rp->r, x->method, x->url, x->body,
	        (long)(left < REQ_MAX_MS ? (left > 500 ? left : 500) : REQ_MAX_MS));
	if (rc < 0)
		return gh_err(g, rc, "%s", rp->r.error);
	return answer_first(g, rp, x->url);
}

/* Judge an HTTP answer @p rp: XCHG_DONE (a complete answer for the caller),
 * XCHG_AGAIN (send again now: a rate limit waited out, a rotated token, a
 * redirect), XCHG_RETRY (temporary: x->last says why), or an error (a
 * non-idempotent request's outcome unknown, a limit past the deadline). */
static int xchg_judge(gh_transport *g, gh_xchg *x, gh_reply *rp)
{
	long st = rp->r.status;
	json_error_t jerr;
	int rc;

	gh_log(g, LEASE_LOG_DEBUG, "github: %s %s -> %ld", x->method, url_path(x->url), st);
	if (rp->r.body && rp->r.body_len)
		rp->json = json_loadb(rp->r.body, rp->r.body_len, 0, &jerr);
	if (is_rate_limited(rp, x->graphql)) {
		x->limited = 1;
		rc = rate_limit_pause(g, rp, x->graphql, x->deadline_ms, x->last, sizeof(x->last));
		return rc < 0 ? rc : XCHG_AGAIN;
	}
	/* A 401 with a token file: a rotated token (a GitHub App's installation
	 * token lasts an hour) is read again and the request, which GitHub
	 * refused, sent once more (issue 24 #6). */
	if (st == 401 && !x->rotated && reread_token(g)) {
		x->rotated = 1;
		x->attempt--;
		return XCHG_AGAIN;
	}
	if (!x->graphql && (st == 301 || st == 302 || st == 307 || st == 308)) {
		if ((rc = follow_redirect(g, rp, x->method, &x->url, x->moved, &x->hops)) < 0)
			return rc;
		x->attempt--;
		return XCHG_AGAIN;
	}
	/* A success whose body is not JSON is no answer of GitHub's (a proxy's
	 * interstitial or captive page): temporary, as a 5xx is (issue 24 #5). */
	if (st >= 200 && st < 300 && st != 204 && !rp->json) {
		if (!x->idempotent)
			return outcome_unknown(
			        g, rp,
			        "%s %s was answered HTTP %ld with a body that is not "
			        "JSON (a proxy's page?)",
			        x->method, url_path(x->url), st);
		snprintf(x->last, sizeof(x->last),
		         "HTTP %ld with a body that is not JSON (a proxy's page?)", st);
		return XCHG_RETRY;
	}
	if (x->graphql && x->idempotent && st == 200 && gql_transient(rp->json)) {
		snprintf(x->last, sizeof(x->last), "GraphQL: %.200s", gql_first_message(rp->json));
		return XCHG_RETRY;
	}
	if (st >= 500 && !x->idempotent)
		return outcome_unknown(g, rp, "GitHub answered %s %s with HTTP %ld", x->method,
		                       url_path(x->url), st);
	if (st < 500) {
		g->nohdr_waits = 0;
		return XCHG_DONE;
	}
	snprintf(x->last, sizeof(x->last), "HTTP %ld", st);
	return XCHG_RETRY;
}

/*
 * Send a request, retrying within @p deadline_ms (monotonic): resolve or
 * connect failures always (nothing was sent), rate limits always (GitHub
 * applied nothing), 5xx and unanswered requests only when @p idempotent.
 * A non-idempotent request answered by nothing or by a 5xx returns
 * LEASE_ENET: the outcome is unknown and is settled by re-reading (§5).
 * On 0, @p rp holds a complete response (any other status) and its JSON.
 */
static int gh_exchange(gh_transport *g, gh_reply *rp, const char *method, const char *url,
                       const char *body, int idempotent, int graphql, int64_t deadline_ms)
{
	gh_xchg x = {.method = method,
	             .url = url,
	             .body = body,
	             .idempotent = idempotent,
	             .graphql = graphql,
	             .deadline_ms = deadline_ms,
	             .rb = {.backoff = 500, .start = mono_ms(g)}};
	int rc;

	memset(rp, 0, sizeof(*rp));
	for (;;) {
		if ((rc = xchg_gate(g, &x)) != 0) {
			if (rc < 0)
				return rc;
			break;
		}
		if ((rc = xchg_send(g, &x, rp)) < 0)
			return rc;
		if (rp->r.result == LEASE_HTTP_OK) {
			if ((rc = xchg_judge(g, &x, rp)) < 0 || rc == XCHG_DONE)
				return rc;
			if (rc == XCHG_AGAIN)
				continue;
		} else {
			gh_log(g, LEASE_LOG_DEBUG, "github: %s %s -> %s", method, url_path(x.url),
			       rp->r.error);
			if (rp->r.result == LEASE_HTTP_UNANSWERED && !idempotent)
				return outcome_unknown(g, rp, "no answer from GitHub to %s %s (%s)",
				                       method, url_path(x.url), rp->r.error);
			snprintf(x.last, sizeof(x.last), "%s", rp->r.error);
		}
		x.limited = 0;
		if (retry_pause(g, &x.rb, method, x.url, x.last, deadline_ms))
			break;
	}
	reply_clear(rp);
	if (x.limited)
		return gh_err(g, LEASE_ERATELIMIT, "%s past the operation's end (--timeout %d s)",
		              x.last, g->timeout_s);
	return gh_err(g, LEASE_ENET, "GitHub unreachable after %d attempts in %lld s: %s",
	              x.attempt, (long long)((mono_ms(g) - x.rb.start + 500) / 1000), x.last);
}

/* The running operation's deadline (issue 24 item 3: --timeout bounds the
 * whole operation, every request, retry and wait of it), or, outside an
 * operation (a library user calling the primitives), the timeout from now. */
static int64_t deadline(const gh_transport *g)
{
	if (g->op_deadline_ms > 0)
		return g->op_deadline_ms;
	return mono_ms(g) + (int64_t)g->timeout_s * 1000;
}

/* Errors every endpoint shares (F25, F26); 0 when @p rp is none of them. */
static int common_status(gh_transport *g, const gh_reply *rp, const char *what)
{
	char msg[MSG_EXCERPT + 1];

	excerpt(msg, sizeof(msg), rest_message(rp));
	switch (rp->r.status) {
	case 401:
		return gh_err(g, LEASE_EAUTH,
		              "GitHub rejected the credentials (401 %s) while %s: check "
		              "GITHUB_TOKEN / --token-file",
		              msg, what);
	case 403:
		return gh_err(g, LEASE_EAUTH,
		              "permission denied by GitHub (403 %s) while %s: the token needs "
		              "'contents: write' on %s/%s",
		              msg, what, g->owner, g->repo);
	case 404:
		return gh_err(g, LEASE_ECONFIG,
		              "repository %s/%s not found, or not visible to this token (404) "
		              "while %s",
		              g->owner, g->repo, what);
	case 409:
		return gh_err(g, LEASE_ECONFIG,
		              "repository %s/%s is empty (409 %s): push an initial commit (for "
		              "example create a README on GitHub), then retry",
		              g->owner, g->repo, msg);
	default: return 0;
	}
}

static int unexpected_status(gh_transport *g, const gh_reply *rp, const char *what)
{
	char msg[MSG_EXCERPT + 1];

	excerpt(msg, sizeof(msg), rest_message(rp));
	return gh_err(g, LEASE_EINTERNAL, "unexpected answer from GitHub (HTTP %ld %s) while %s",
	              rp->r.status, msg, what);
}

static int refuse_without_update_refs(gh_transport *g)
{
	return gh_err(g, LEASE_ECONFIG,
	              "this GitHub server has no GraphQL updateRefs mutation: reflease needs it "
	              "for every compare-and-swap (GitHub.com or GHES 3.14+); nothing was written");
}

/* ---- GraphQL --------------------------------------------------------------- */

/* POST a GraphQL document; on 0 the reply is HTTP 200 with a JSON object. */
static int gql_post(gh_transport *g, gh_reply *rp, const char *query, json_t *vars, int idempotent,
                    const char *what)
{
	json_t *req = json_object();
	char *body = NULL;
	int rc;

	if (!req)
		return LEASE_ENOMEM;
	json_object_set_new(req, "query", json_string(query));
	if (vars)
		json_object_set(req, "variables", vars);
	body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!body)
		return LEASE_ENOMEM;
	rc = gh_exchange(g, rp, "POST", g->graphql, body, idempotent, 1, deadline(g));
	free(body);
	if (rc < 0)
		return rc;
	if (rp->r.status != 200) {
		if ((rc = common_status(g, rp, what)) == 0)
			rc = unexpected_status(g, rp, what);
		reply_clear(rp);
		return rc;
	}
	if (!json_is_object(rp->json)) {
		reply_clear(rp);
		return gh_err(g, LEASE_EINTERNAL, "GitHub's GraphQL answer is not JSON while %s",
		              what);
	}
	return 0;
}

/* Errors a GraphQL answer may carry whatever the query (a 200 with errors[]). */
static int gql_common_errors(gh_transport *g, json_t *json, const char *what)
{
	json_t *e;
	char msg[MSG_EXCERPT + 1];

	if (!json_array_size(json_object_get(json, "errors")))
		return 0;
	excerpt(msg, sizeof(msg), gql_first_message(json));
	if ((e = gql_error_of_type(json, "undefinedField"))) {
		json_t *f = json_object_get(json_object_get(e, "extensions"), "fieldName");
		if (json_is_string(f) && strcmp(json_string_value(f), "updateRefs") == 0)
			return gh_err(g, LEASE_ECONFIG,
			              "this GitHub server has no GraphQL updateRefs mutation (%s): "
			              "reflease needs it for every compare-and-swap (GitHub.com or "
			              "GHES 3.14+)",
			              msg);
		return gh_err(g, LEASE_ECONFIG,
		              "this GitHub server's GraphQL schema lacks a "
		              "field reflease needs (%s)",
		              msg);
	}
	if (gql_error_of_type(json, "FORBIDDEN"))
		return gh_err(g, LEASE_EAUTH,
		              "permission denied by GitHub (%s) while %s: the token needs "
		              "'contents: write' on %s/%s",
		              msg, what, g->owner, g->repo);
	if (gql_error_of_type(json, "NOT_FOUND"))
		return gh_err(g, LEASE_ECONFIG,
		              "repository %s/%s not found, or not visible to this token (%s)",
		              g->owner, g->repo, msg);
	return 0;
}

static void remember_repo_id(gh_transport *g, json_t *repo)
{
	json_t *id = json_object_get(repo, "id");

	if (json_is_string(id) && strlen(json_string_value(id)) < sizeof(g->repo_id))
		snprintf(g->repo_id, sizeof(g->repo_id), "%s", json_string_value(id));
}

/* The answer's data.repository, after gql_common_errors(), its id remembered.
 * @return 0 (*repo set), an error of gql_common_errors(), or LEASE_EINTERNAL
 *         when the answer has no repository */
static int gql_repository(gh_transport *g, json_t *json, const char *what, json_t **repo)
{
	int rc;

	if ((rc = gql_common_errors(g, json, what)) < 0)
		return rc;
	*repo = json_object_get(json_object_get(json, "data"), "repository");
	if (!json_is_object(*repo))
		return gh_err(g, LEASE_EINTERNAL, "GitHub's GraphQL answer has no repository (%s)",
		              gql_first_message(json));
	remember_repo_id(g, *repo);
	return 0;
}

static json_t *repo_vars(const gh_transport *g)
{
	return json_pack("{ssss}", "owner", g->owner, "name", g->repo);
}

/* The repository node id, fetched once per transport (protocol.md §9). */
static int ensure_repo_id(gh_transport *g)
{
	static const char q[] =
	        "query($owner:String!,$name:String!){repository(owner:$owner,name:$name){id}}";
	gh_reply rp;
	json_t *vars;
	int rc;

	if (g->repo_id[0])
		return 0;
	if (!(vars = repo_vars(g)))
		return LEASE_ENOMEM;
	rc = gql_post(g, &rp, q, vars, 1, "reading the repository id");
	json_decref(vars);
	if (rc == 0 && (rc = gql_common_errors(g, rp.json, "reading the repository id")) == 0) {
		remember_repo_id(g,
		                 json_object_get(json_object_get(rp.json, "data"), "repository"));
		if (!g->repo_id[0])
			rc = gh_err(g, LEASE_ECONFIG, "repository %s/%s not found by GraphQL",
			            g->owner, g->repo);
	}
	reply_clear(&rp);
	return rc;
}

/* Fill @p c from a GraphQL GitObject (`__typename oid ...on Commit{message
 * committedDate parents{nodes{oid}}}`); @p is_commit: known to be a commit
 * (a parent node, which carries no __typename). LEASE_EINTERNAL when malformed. */
static int commit_from_gql(lease_commit *c, json_t *obj, int is_commit)
{
	json_t *ty = json_object_get(obj, "__typename"), *oid = json_object_get(obj, "oid");
	json_t *msg, *date, *parents;

	memset(c, 0, sizeof(*c));
	if (!json_is_string(oid) || lease_oid_fromhex(&c->oid, json_string_value(oid)) < 0)
		return LEASE_EINTERNAL;
	if (!is_commit && (!json_is_string(ty) || strcmp(json_string_value(ty), "Commit") != 0))
		return 0; /* exists, not a commit */
	msg = json_object_get(obj, "message");
	date = json_object_get(obj, "committedDate");
	if (!json_is_string(msg) || !json_is_string(date))
		return LEASE_EINTERNAL;
	c->is_commit = 1;
	c->time = parse_iso8601(json_string_value(date));
	if (c->time < 0)
		return LEASE_EINTERNAL;
	parents = json_object_get(json_object_get(obj, "parents"), "nodes");
	if (json_array_size(parents) > 0) {
		json_t *p = json_object_get(json_array_get(parents, 0), "oid");
		if (!json_is_string(p) || lease_oid_fromhex(&c->parent, json_string_value(p)) < 0)
			return LEASE_EINTERNAL;
		c->has_parent = 1;
	}
	if (!(c->message = strdup(json_string_value(msg))))
		return LEASE_ENOMEM;
	return 0;
}

/* ---- REST helpers ------------------------------------------------------------ */

/* refname: "refs/" + [A-Za-z0-9._/@-], no "..", no "@{", so it can go into a URL path as
 * is ('@' is a path character, RFC 3986; slot names, protocol.md "Slots"). */
static int check_refname(gh_transport *g, const char *refname)
{
	size_t i;

	if (strncmp(refname, "refs/", 5) != 0 || strlen(refname) > 300 || strstr(refname, "..") ||
	    strstr(refname, "@{"))
		return gh_err(g, LEASE_EINVALID, "invalid ref name '%.300s'", refname);
	for (i = 5; refname[i]; i++) {
		char c = refname[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == '/' || c == '@'))
			return gh_err(g, LEASE_EINVALID, "invalid ref name '%.300s'", refname);
	}
	return 0;
}

static char *rest_url(const gh_transport *g, const char *suffix)
{
	size_t n = strlen(g->repo_base) + strlen(suffix) + 2;
	char *u = malloc(n);

	if (u)
		snprintf(u, n, "%s/%s", g->repo_base, suffix);
	return u;
}

static int rest_call(gh_transport *g, gh_reply *rp, const char *method, const char *suffix,
                     json_t *body, int idempotent)
{
	char *url = rest_url(g, suffix), *b = NULL;
	int rc;

	if (!url)
		return LEASE_ENOMEM;
	if (body && !(b = json_dumps(body, JSON_COMPACT))) {
		free(url);
		return LEASE_ENOMEM;
	}
	rc = gh_exchange(g, rp, method, url, b, idempotent, 0, deadline(g));
	free(b);
	free(url);
	return rc;
}

/* REST read of one ref: GET /git/ref/<ref without "refs/"> (404 = absent).
 * With @p cond (a waiter's poll, wait_change): If-None-Match cond->etag when
 * it is this ref's; a 304 sets cond->not_modified, a 200 leaves its ETag. */
static int rest_read_ref(gh_transport *g, const char *refname, int *present, lease_oid *oid,
                         lease_probe *cond)
{
	char suffix[400];
	gh_reply rp;
	json_t *sha;
	int rc;

	snprintf(suffix, sizeof(suffix), "git/ref/%s", refname + 5);
	if (cond && strcmp(cond->etag_ref, refname) == 0)
		lease__http_set_if_none_match(g->http, cond->etag);
	rc = rest_call(g, &rp, "GET", suffix, NULL, 1);
	/* a request not sent (its deadline passed) leaves no validator armed
	 * for another GET, which would take a 304 for an answer */
	lease__http_set_if_none_match(g->http, "");
	if (rc < 0)
		return rc;
	if (cond && rp.r.status != 304) {
		snprintf(cond->etag, sizeof(cond->etag), "%s", rp.r.status == 200 ? rp.r.etag : "");
		snprintf(cond->etag_ref, sizeof(cond->etag_ref), "%s", refname);
	}
	if (cond && rp.r.status == 304) {
		cond->not_modified = 1;
		rc = 0;
	} else if (rp.r.status == 404) {
		*present = 0;
		rc = 0;
	} else if (rp.r.status == 200) {
		sha = json_object_get(json_object_get(rp.json, "object"), "sha");
		if (!json_is_object(rp.json) || !json_is_string(json_object_get(rp.json, "ref")) ||
		    strcmp(json_string_value(json_object_get(rp.json, "ref")), refname) != 0 ||
		    !json_is_string(sha) || lease_oid_fromhex(oid, json_string_value(sha)) < 0)
			rc = gh_err(g, LEASE_EINTERNAL, "malformed answer from GitHub reading %s",
			            refname);
		else
			*present = 1;
	} else if ((rc = common_status(g, &rp, "reading a ref")) == 0) {
		rc = unexpected_status(g, &rp, "reading a ref");
	}
	reply_clear(&rp);
	return rc;
}

/* REST read of a commit: GET /git/commits/{sha} (404 = not found). */
static int rest_read_commit(gh_transport *g, lease_commit *out, const lease_oid *oid)
{
	char suffix[80], hex[LEASE_OID_HEXSZ + 1];
	gh_reply rp;
	json_t *msg, *date, *sha, *parents;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	lease_oid_tohex(hex, oid);
	snprintf(suffix, sizeof(suffix), "git/commits/%s", hex);
	if ((rc = rest_call(g, &rp, "GET", suffix, NULL, 1)) < 0)
		return rc;
	if (rp.r.status == 404 || rp.r.status == 422) {
		rc = gh_err(g, LEASE_ENOTFOUND, "commit %s not found", hex);
	} else if (rp.r.status == 200) {
		sha = json_object_get(rp.json, "sha");
		msg = json_object_get(rp.json, "message");
		date = json_object_get(json_object_get(rp.json, "committer"), "date");
		parents = json_object_get(rp.json, "parents");
		/* the object answered must be the one asked for (as on the GraphQL path) */
		if (!json_is_string(sha) || lease_oid_fromhex(&out->oid, json_string_value(sha)) ||
		    !lease_oid_equal(&out->oid, oid) || !json_is_string(msg) ||
		    !json_is_string(date) ||
		    (out->time = parse_iso8601(json_string_value(date))) < 0) {
			rc = gh_err(g, LEASE_EINTERNAL, "malformed commit %s from GitHub", hex);
		} else {
			out->is_commit = 1;
			if (json_array_size(parents) > 0) {
				json_t *p = json_object_get(json_array_get(parents, 0), "sha");
				if (!json_is_string(p) ||
				    lease_oid_fromhex(&out->parent, json_string_value(p)) < 0)
					rc = gh_err(g, LEASE_EINTERNAL,
					            "malformed commit %s from GitHub", hex);
				out->has_parent = 1;
			}
			if (rc == 0 && !(out->message = strdup(json_string_value(msg))))
				rc = LEASE_ENOMEM;
		}
	} else if ((rc = common_status(g, &rp, "reading a commit")) == 0) {
		rc = unexpected_status(g, &rp, "reading a commit");
	}
	if (rc < 0)
		lease_commit_clear(out);
	reply_clear(&rp);
	return rc;
}

/* Keep the most refs a listing held at once (the test hook). */
static void note_held(gh_transport *g, size_t n)
{
	if (n > g->list_peak)
		g->list_peak = n;
}

/* Move @p part's entries to the end of @p out (names and commits change
 * hands; @p part is left empty). */
static int list_take(lease_ref_list *out, lease_ref_list *part)
{
	lease_ref_entry *items;
	size_t need = out->count + part->count, cap = out->cap ? out->cap : 16;

	if (!part->count)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap != out->cap) {
		if (!(items = realloc(out->items, cap * sizeof(*items))))
			return LEASE_ENOMEM;
		out->items = items;
		out->cap = cap;
	}
	memcpy(out->items + out->count, part->items, part->count * sizeof(*items));
	out->count = need;
	free(part->items);
	memset(part, 0, sizeof(*part));
	return 0;
}

/* Pages of a listing followed at most (a guard; a loop is caught sooner by
 * page_advances). */
#define LIST_PAGES_MAX 100000

/* GitHub lists refs in name order, so each page of a listing ends past the
 * page before (*@p last, its highest name, malloc'd; updated): a page that
 * does not — a `next` link leading back — fails the listing instead of
 * looping through it. */
static int page_advances(gh_transport *g, const lease_ref_list *part, char **last)
{
	const char *hi = NULL;
	size_t i;

	for (i = 0; i < part->count; i++)
		if (!hi || strcmp(part->items[i].refname, hi) > 0)
			hi = part->items[i].refname;
	if (!hi)
		return 0;
	if (*last && strcmp(hi, *last) <= 0)
		return gh_err(g, LEASE_EINTERNAL,
		              "GitHub's ref listing does not advance (a page ends at %.200s, "
		              "the page before at %.200s); not followed",
		              hi, *last);
	free(*last);
	return (*last = strdup(hi)) ? 0 : LEASE_ENOMEM;
}

/* GET /git/matching-refs/<suffix> (a string-prefix match), following
 * `Link: rel="next"` (each page past the one before): each page's refs handed to @p fn (which may
 * take them; what it leaves is freed) before the next page is asked for.
 * A nonzero value of @p fn ends the listing and is returned. */
static int rest_list_pages(gh_transport *g, const char *match,
                           int (*fn)(gh_transport *g, lease_ref_list *part, void *payload),
                           void *payload)
{
	char suffix[400], *url = NULL, *last = NULL;
	gh_reply rp;
	json_t *e;
	size_t i;
	int rc = 0, page;

	snprintf(suffix, sizeof(suffix), "git/matching-refs/%s", match);
	if (!(url = rest_url(g, suffix)))
		return LEASE_ENOMEM;
	for (page = 0; url; page++) {
		lease_ref_list part = {NULL, 0, 0};

		/* a listing cut short is never taken for the whole (issue 29) */
		if (page >= LIST_PAGES_MAX) {
			rc = gh_err(g, LEASE_EINTERNAL,
			            "GitHub's ref listing goes on past %d pages; not followed "
			            "further",
			            LIST_PAGES_MAX);
			break;
		}
		rc = gh_exchange(g, &rp, "GET", url, NULL, 1, 0, deadline(g));
		free(url);
		url = NULL;
		if (rc < 0)
			break; /* `last` is freed below (a page failing after others) */
		if (rp.r.status != 200) {
			if ((rc = common_status(g, &rp, "listing refs")) == 0)
				rc = unexpected_status(g, &rp, "listing refs");
			reply_clear(&rp);
			break;
		}
		if (!json_is_array(rp.json)) {
			reply_clear(&rp);
			rc = gh_err(g, LEASE_EINTERNAL, "malformed ref listing from GitHub");
			break;
		}
		json_array_foreach(rp.json, i, e)
		{
			json_t *ref = json_object_get(e, "ref");
			json_t *sha = json_object_get(json_object_get(e, "object"), "sha");
			lease_oid oid;
			if (!json_is_string(ref) || !json_is_string(sha) ||
			    lease_oid_fromhex(&oid, json_string_value(sha)) < 0) {
				rc = gh_err(g, LEASE_EINTERNAL,
				            "malformed ref listing from GitHub");
				break;
			}
			if ((rc = lease_ref_list_push(&part, json_string_value(ref), &oid)) < 0)
				break;
		}
		/* Follow a next page only under the API base: the request carries the
		 * credential, which must never go to another host or path (issue 8). */
		if (rc == 0 && rp.r.next_url[0] &&
		    (strncmp(rp.r.next_url, g->api, strlen(g->api)) != 0 ||
		     rp.r.next_url[strlen(g->api)] != '/'))
			rc = gh_err(g, LEASE_EINTERNAL,
			            "GitHub's ref listing links its next page outside %s; not "
			            "followed",
			            g->api);
		if (rc == 0 && rp.r.next_url[0] && !(url = strdup(rp.r.next_url)))
			rc = LEASE_ENOMEM;
		reply_clear(&rp);
		if (rc == 0)
			rc = page_advances(g, &part, &last);
		if (rc == 0)
			rc = fn(g, &part, payload);
		lease_ref_list_clear(&part);
		if (rc != 0)
			break;
	}
	free(url);
	free(last);
	return rc;
}

/* rest_list's page callback: append the page to the list. */
static int append_page(gh_transport *g, lease_ref_list *part, void *payload)
{
	lease_ref_list *out = payload;
	int rc = list_take(out, part);

	note_held(g, out->count);
	return rc;
}

/* The whole listing of rest_list_pages() appended to @p out. */
static int rest_list(gh_transport *g, lease_ref_list *out, const char *match)
{
	return rest_list_pages(g, match, append_page, out);
}

static void snap_drop(gh_transport *g)
{
	lease_ref_list_clear(&g->snap);
	lease_ref_list_clear(&g->snap_absent);
	g->snap_prefix[0] = '\0';
}

/* Before a ref write: the name is one this transport writes, updateRefs is
 * allowed, and the snapshot of reads is dropped (the write changes it).
 * @return 0, or the refusal (LEASE_EINVALID, LEASE_ECONFIG) */
static int ref_write_begin(gh_transport *g, const char *refname)
{
	int rc;

	if ((rc = check_refname(g, refname)) < 0)
		return rc;
	if (g->no_update_refs)
		return refuse_without_update_refs(g);
	snap_drop(g);
	return 0;
}

/* The index in snap_absent of the ref whose archive listing @p prefix is
 * ("<snap_prefix>-archive/<name>/" for the ref "<snap_prefix>/<name>"), or -1. */
static long snap_absent_of(const gh_transport *g, const char *prefix)
{
	size_t i, n = strlen(g->snap_prefix), tail;
	const char *name;

	if (!n || strncmp(prefix, g->snap_prefix, n) != 0 ||
	    strncmp(prefix + n, "-archive/", 9) != 0)
		return -1;
	name = prefix + n + 9;
	tail = strlen(name);
	if (tail < 2 || name[tail - 1] != '/')
		return -1;
	for (i = 0; i < g->snap_absent.count; i++) {
		const char *r = g->snap_absent.items[i].refname;
		if (strncmp(r, g->snap_prefix, n) == 0 && r[n] == '/' &&
		    strlen(r + n + 1) == tail - 1 && strncmp(r + n + 1, name, tail - 1) == 0)
			return (long)i;
	}
	return -1;
}

/* An archive listing (refs/<ns>-archive/<name>/) asked for right after the
 * absence of refs/<ns>/<name> was confirmed by listing refs/<ns>*: served
 * from that listing, which was taken after the ref was seen absent (so it
 * holds every archive written before the lease was pruned) — once per ref
 * the listing confirmed absent (one, or every absent member of a set read
 * by read_refs). 1 when served. */
static int snap_serve(gh_transport *g, lease_ref_list *out, const char *prefix, int *rc)
{
	lease_ref_list *a = &g->snap_absent;
	long k;
	size_t i;

	*rc = 0;
	if (!g->snap_prefix[0] || mono_ms(g) - g->snap_ms >= 2000) {
		snap_drop(g);
		return 0;
	}
	if ((k = snap_absent_of(g, prefix)) < 0)
		return 0; /* another listing: asked for at GitHub, the snapshot kept */
	for (i = 0; i < g->snap.count && *rc == 0; i++)
		if (strncmp(g->snap.items[i].refname, prefix, strlen(prefix)) == 0)
			*rc = lease_ref_list_push(out, g->snap.items[i].refname,
			                          &g->snap.items[i].oid);
	/* served once: the ref leaves the list, the snapshot with the last one */
	free(a->items[k].refname);
	a->items[k] = a->items[a->count - 1];
	a->count--;
	if (a->count == 0)
		snap_drop(g);
	return 1;
}

/* ---- the vtable ----------------------------------------------------------- */

/* In a burst (gh_pace), a content-creating request waits until one second
 * after the last one (issue 24 #4); outside a burst it goes at once. */
static void pace_write(gh_transport *g)
{
	int64_t wait;

	if (!g->burst || g->last_write_ms <= 0)
		return;
	wait = g->last_write_ms + BURST_GAP_MS - mono_ms(g);
	if (wait <= 0)
		return;
	sleep_ms(g, wait);
	g->paced_ms += wait;
}

/* Keep the commit just written (oid @p oid) as a read would give it, in
 * place of the oldest kept (best effort: no memory, not kept). */
static void remember_written(gh_transport *g, const lease_oid *oid, const lease_oid *parent,
                             const char *message, int64_t when)
{
	lease_commit *c = &g->written[g->written_next++ % GH_WRITTEN];

	lease_commit_clear(c);
	if (!(c->message = strdup(message)))
		return;
	c->oid = *oid;
	c->is_commit = 1;
	c->has_parent = parent != NULL;
	if (parent)
		c->parent = *parent;
	c->time = when;
}

static const lease_commit *find_written(const gh_transport *g, const lease_oid *oid)
{
	size_t i;

	for (i = 0; i < GH_WRITTEN; i++)
		if (g->written[i].message && lease_oid_equal(&g->written[i].oid, oid))
			return &g->written[i];
	return NULL;
}

/* The entries of @p l whose commit (and its parent, when it has one) this
 * transport wrote: filled from what it kept, not read again. */
static int serve_written(const gh_transport *g, lease_ref_list *l)
{
	size_t i;

	for (i = 0; i < l->count; i++) {
		lease_ref_entry *e = &l->items[i];
		const lease_commit *c = find_written(g, &e->oid), *p;

		if (!c || e->has_commit)
			continue;
		p = c->has_parent ? find_written(g, &c->parent) : NULL;
		if (c->has_parent && !p)
			continue; /* the parent is the prefetch's to read */
		if (lease_commit_copy(&e->commit, c) < 0)
			return LEASE_ENOMEM;
		e->has_commit = 1;
		if (p) {
			if (lease_commit_copy(&e->parent_commit, p) < 0)
				return LEASE_ENOMEM;
			e->has_parent_commit = 1;
		}
	}
	return 0;
}

static int gh_write_commit(lease_transport *t, lease_oid *out, const lease_oid *parent,
                           const char *message, int64_t when)
{
	gh_transport *g = (gh_transport *)t;
	char date[32], hex[LEASE_OID_HEXSZ + 1];
	json_t *body, *parents, *who;
	gh_reply rp;
	json_t *sha;
	int rc;

	if (g->no_update_refs)
		return refuse_without_update_refs(g);
	format_iso8601(date, when);
	if (!(parents = json_array()))
		return LEASE_ENOMEM;
	if (parent) {
		lease_oid_tohex(hex, parent);
		json_array_append_new(parents, json_string(hex));
	}
	who = json_pack("{ssssss}", "name", "reflease", "email", "reflease@localhost", "date",
	                date);
	body = json_pack("{s:s, s:s, s:o, s:o, s:o}", "message", message, "tree", EMPTY_TREE,
	                 "parents", parents, "author", json_copy(who), "committer", who);
	if (!body)
		return LEASE_ENOMEM;
	/* Writing an object is idempotent (same content, same oid): safe to resend. */
	pace_write(g);
	rc = rest_call(g, &rp, "POST", "git/commits", body, 1);
	g->last_write_ms = mono_ms(g);
	json_decref(body);
	if (rc < 0)
		return rc;
	if (rp.r.status == 201 || rp.r.status == 200) {
		sha = json_object_get(rp.json, "sha");
		if (!json_is_string(sha) || lease_oid_fromhex(out, json_string_value(sha)) < 0)
			rc = gh_err(g, LEASE_EINTERNAL,
			            "malformed answer from GitHub writing a "
			            "commit");
		else
			remember_written(g, out, parent, message, when);
	} else if (rp.r.status == 422 && contains_ci(rest_message(&rp), "rule")) {
		char msg[MSG_EXCERPT + 1];
		excerpt(msg, sizeof(msg), rest_message(&rp));
		rc = gh_err(g, LEASE_EAUTH, "repository rules of %s/%s refuse the commit (422 %s)",
		            g->owner, g->repo, msg);
	} else if ((rc = common_status(g, &rp, "writing a commit")) == 0) {
		rc = unexpected_status(g, &rp, "writing a commit");
	}
	reply_clear(&rp);
	return rc;
}

#define CREATE_TRIES 3 /* POST /git/refs answered a transient 422 (issue 15 #1) */

/* A ref under "<refname>/" that makes @p refname impossible to create (a
 * path collision, F10): positive evidence from one REST listing. 1 with its
 * name in @p out, 0 none, or an error. */
static int colliding_ref(gh_transport *g, const char *refname, char *out, size_t outlen)
{
	lease_ref_list l = {NULL, 0, 0};
	char under[330];
	size_t n;
	int rc;

	/* the listed names are GitHub's: compared whole ("refs/…/"), never read
	 * at an offset a short name does not reach (a fuzzed listing, issue 26) */
	n = (size_t)snprintf(under, sizeof(under), "%s/", refname);
	if ((rc = rest_list(g, &l, under + 5)) < 0) {
		lease_ref_list_clear(&l); /* a page may have filled part of it */
		return rc;
	}
	rc = 0;
	for (size_t i = 0; i < l.count && !rc; i++)
		if (strncmp(l.items[i].refname, under, n) == 0) {
			snprintf(out, outlen, "%s", l.items[i].refname);
			rc = 1;
		}
	lease_ref_list_clear(&l);
	return rc;
}

/*
 * POST /git/refs. 201 created; 422 "Reference already exists" → EEXISTS
 * (the primitives settle it by re-reading, polling through replica lag: a
 * 404 right after it is possible, PyGithub#2759); 422 repository rules →
 * permission denied. Any other 422 ("Validation Failed", "Reference update
 * failed") is classified by positive evidence only (F09, F10, issue 15 #1,
 * #6): a REST re-read showing the ref → EEXISTS (settled upstream); a ref
 * under "<refname>/" → the path collision (78); neither → GitHub's sporadic
 * failure (github/rest-api-description#4887, exercism/website#8248), or a
 * re-read behind replica lag: the create is resent (a create never
 * overwrites) up to CREATE_TRIES times >= 1 s apart, then unreachable (69),
 * nothing created.
 */
static int gh_create_ref(lease_transport *t, const char *refname, const lease_oid *new_oid)
{
	gh_transport *g = (gh_transport *)t;
	char hex[LEASE_OID_HEXSZ + 1], ns[64], msg[MSG_EXCERPT + 1], other[320];
	gh_reply rp;
	json_t *body;
	int rc, tries, present = 0;
	lease_oid seen;

	if ((rc = ref_write_begin(g, refname)) < 0)
		return rc;
	lease_oid_tohex(hex, new_oid);
	ref_ns(ns, refname);
	if (!(body = json_pack("{ssss}", "ref", refname, "sha", hex)))
		return LEASE_ENOMEM;
	for (tries = 1;; tries++) {
		pace_write(g);
		rc = rest_call(g, &rp, "POST", "git/refs", body, 0);
		g->last_write_ms = mono_ms(g);
		if (rc < 0)
			break;
		excerpt(msg, sizeof(msg), rest_message(&rp));
		if (rp.r.status == 201) {
			rc = 0;
		} else if (rp.r.status != 422) {
			if ((rc = common_status(g, &rp, "creating a ref")) == 0)
				rc = unexpected_status(g, &rp, "creating a ref");
		} else if (contains_ci(msg, "rule")) {
			rc = gh_err(g, LEASE_EAUTH,
			            "repository rules of %s/%s forbid writing refs/%s/ (422 %s): "
			            "exempt the namespace or the token from the ruleset",
			            g->owner, g->repo, ns, msg);
		} else if (contains_ci(msg, "already exists")) {
			rc = gh_err(g, LEASE_EEXISTS, "%s already exists (422)", refname);
		} else if ((rc = rest_read_ref(g, refname, &present, &seen, NULL)) < 0) {
			/* the re-read's error */
		} else if (present) {
			rc = gh_err(g, LEASE_EEXISTS, "%s exists (422 %s)", refname, msg);
		} else if ((rc = colliding_ref(g, refname, other, sizeof(other))) > 0) {
			rc = gh_err(g, LEASE_ECONFIG,
			            "GitHub refused to create %s (422 %s): the ref %s collides "
			            "with it as a path; remove that ref",
			            refname, msg, other);
		} else if (rc == 0 && tries < CREATE_TRIES) {
			int64_t wait = jitter(g, 1000LL * tries, 0.5);
			gh_log(g, LEASE_LOG_WARN,
			       "github: GitHub refused to create %s (422 %s) and it reads absent; "
			       "retrying in %lld ms",
			       refname, msg, (long long)wait);
			reply_clear(&rp);
			sleep_ms(g, wait);
			continue;
		} else if (rc == 0) {
			rc = gh_err(g, LEASE_ENET,
			            "GitHub refused to create %s %d times (422 %s) and it does not "
			            "exist: a transient failure on GitHub's side; nothing was "
			            "created, try again",
			            refname, tries, msg);
		}
		reply_clear(&rp);
		break;
	}
	json_decref(body);
	return rc;
}

/* updateRefs with a beforeOid per update: the compare-and-swap of replace
 * and delete, and of a set (cas_many, protocol.md "Sets"): GitHub applies
 * the @p n updates of one mutation atomically — "if one of them is rejected,
 * no other ref will be modified" (GraphQL reference, mutation updateRefs);
 * a zero beforeOid "verifies that the reference should not exist" (a
 * create), a zero afterOid deletes. */
static int gh_update_refs(gh_transport *g, const lease_ref_update *u, size_t n, const char *what)
{
	static const char q[] = "mutation($input:UpdateRefsInput!){updateRefs(input:$input){"
	                        "clientMutationId}}";
	char before[LEASE_OID_HEXSZ + 1], after[LEASE_OID_HEXSZ + 1], ns[64], msg[MSG_EXCERPT + 1];
	const char *refname = u[0].refname;
	gh_reply rp;
	json_t *vars, *ups, *data;
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = ref_write_begin(g, u[i].refname)) < 0)
			return rc;
	if ((rc = ensure_repo_id(g)) < 0)
		return rc;
	if (!(ups = json_array()))
		return LEASE_ENOMEM;
	for (i = 0; i < n; i++) {
		lease_oid_tohex(before, &u[i].old_oid);
		lease_oid_tohex(after, &u[i].new_oid);
		/* force:true — beforeOid already makes each update an exact
		 * compare-and-swap; force:false would also demand a fast-forward
		 * (schema: RefUpdate.force), which `break --force` over a blob tip
		 * or any replace not descending from the tip can never be (issue
		 * 15 #5). */
		if (json_array_append_new(ups, json_pack("{s:s, s:s, s:s, s:b}", "name",
		                                         u[i].refname, "beforeOid", before,
		                                         "afterOid", after, "force", 1)) < 0) {
			json_decref(ups);
			return LEASE_ENOMEM;
		}
	}
	vars = json_pack("{s:{s:s, s:o}}", "input", "repositoryId", g->repo_id, "refUpdates", ups);
	if (!vars)
		return LEASE_ENOMEM;
	pace_write(g);
	rc = gql_post(g, &rp, q, vars, 0, what);
	g->last_write_ms = mono_ms(g);
	json_decref(vars);
	if (rc < 0)
		return rc;
	if ((rc = gql_common_errors(g, rp.json, what)) < 0)
		goto out;
	data = json_object_get(json_object_get(rp.json, "data"), "updateRefs");
	if (json_is_object(data) && !json_array_size(json_object_get(rp.json, "errors"))) {
		rc = 0;
		goto out;
	}
	excerpt(msg, sizeof(msg), gql_first_message(rp.json));
	ref_ns(ns, refname);
	if (gql_transient(rp.json))
		rc = gh_err(g, LEASE_ENET, "GitHub failed %s of %s%s (%s): the outcome is unknown",
		            what, refname, n > 1 ? " and the rest of its set" : "", msg);
	else if (contains_ci(msg, "rule violation") || contains_ci(msg, "repository rule"))
		rc = gh_err(g, LEASE_EAUTH,
		            "repository rules of %s/%s forbid writing refs/%s/ (%s): exempt the "
		            "namespace or the token from the ruleset",
		            g->owner, g->repo, ns, msg);
	else
		/* A stale beforeOid (HTTP 200 with errors[]): reported as a mismatch;
		 * the primitives re-read to say what happened (protocol.md §3). */
		rc = gh_err(g, LEASE_ECAS, "GitHub refused %s of %s%s (%s)", what, refname,
		            n > 1 ? " and the rest of its set" : "", msg);
out:
	reply_clear(&rp);
	return rc;
}

/* One ref's updateRefs (replace: @p new_oid; delete: NULL). */
static int gh_update_ref(gh_transport *g, const char *refname, const lease_oid *old_oid,
                         const lease_oid *new_oid, const char *what)
{
	lease_ref_update u;

	memset(&u, 0, sizeof(u));
	u.refname = refname;
	u.old_oid = *old_oid;
	if (new_oid)
		u.new_oid = *new_oid;
	return gh_update_refs(g, &u, 1, what);
}

/* cas_many (reflease/sys/transport.h version 3): the whole set in one
 * updateRefs mutation, creations included (a zero beforeOid). */
static int gh_cas_many(lease_transport *t, const lease_ref_update *u, size_t n)
{
	if (n == 0)
		return gh_err((gh_transport *)t, LEASE_EINVALID, "an empty set write");
	return gh_update_refs((gh_transport *)t, u, n, "writing a set of refs");
}

static int gh_replace_ref(lease_transport *t, const char *refname, const lease_oid *old_oid,
                          const lease_oid *new_oid)
{
	return gh_update_ref((gh_transport *)t, refname, old_oid, new_oid, "replacing a ref");
}

static int gh_delete_ref(lease_transport *t, const char *refname, const lease_oid *old_oid)
{
	return gh_update_ref((gh_transport *)t, refname, old_oid, NULL, "deleting a ref");
}

/* The schema probe riding on the first read: `ur:__type(name:"UpdateRefsInput")`
 * is null on a server without the updateRefs mutation (an old GHES), which
 * is then refused before anything is written (protocol.md §9). */
static void check_schema(gh_transport *g, json_t *data)
{
	json_t *ur = json_object_get(data, "ur");

	if (json_is_object(ur))
		g->no_update_refs = 0;
	else if (json_is_null(ur))
		g->no_update_refs = 1;
}

/* Drop GraphQL errors about the optional @p alias field (its answer is a
 * hint only); 1 when any was dropped. */
static int drop_alias_errors(json_t *json, const char *alias)
{
	json_t *errs = json_object_get(json, "errors"), *e, *p;
	size_t i, k;
	int dropped = 0;

	for (i = json_array_size(errs); i-- > 0;) {
		e = json_array_get(errs, i);
		json_array_foreach(json_object_get(e, "path"), k, p)
		{
			if (json_is_string(p) && strcmp(json_string_value(p), alias) == 0) {
				json_array_remove(errs, i);
				dropped = 1;
				break;
			}
		}
	}
	if (dropped && json_array_size(errs) == 0)
		json_object_del(json, "errors");
	return dropped;
}

/* 1 when GraphQL's `ref` answer is the ref asked for: its prefix + name
 * spell @p refname exactly (positive evidence only, issue 15 #3). */
static int gql_ref_is(json_t *ref, const char *refname)
{
	json_t *prefix = json_object_get(ref, "prefix"), *name = json_object_get(ref, "name");
	size_t n;

	if (!json_is_string(prefix) || !json_is_string(name))
		return 0;
	n = strlen(json_string_value(prefix));
	return strncmp(refname, json_string_value(prefix), n) == 0 &&
	       strcmp(refname + n, json_string_value(name)) == 0;
}

/* A ref read's answer: the schema probe's part taken (when @p probe: it
 * rode on this read), then data.repository as gql_repository() gives it. */
static int gql_read_answer(gh_transport *g, json_t *json, int probe, const char *what,
                           json_t **repo)
{
	if (probe) {
		drop_alias_errors(json, "ur");
		check_schema(g, json_object_get(json, "data"));
		g->probed = 1;
	}
	return gql_repository(g, json, what, repo);
}

/* What a read asks of a Ref: its name (gql_ref_is) and its target, the
 * commit with its message, date and first parent (commit_from_gql). */
#define GQL_REF_FIELDS                                                                             \
	"{prefix name target{__typename oid ...on Commit{message committedDate "                   \
	"parents(first:1){nodes{oid}}}}}"
/* The schema probe riding on a process's first read (check_schema). */
#define GQL_PROBE "ur:__type(name:\"UpdateRefsInput\"){name}"

/* GraphQL read: repository id + ref target with its message in one answer
 * (the first read of a process also carries the schema probe). *present is
 * 1 only when GraphQL returned the very ref asked for; 0 is no evidence. */
static int gql_read_ref(gh_transport *g, const char *refname, int *present, lease_oid *oid,
                        int *has_commit, lease_commit *commit_out)
{
	static const char q[] =
	        "query($owner:String!,$name:String!,$ref:String!){repository("
	        "owner:$owner,name:$name){id ref(qualifiedName:$ref)" GQL_REF_FIELDS "}}";
	static const char q_probe[] = "query($owner:String!,$name:String!,$ref:String!){" GQL_PROBE
	                              " repository(owner:$owner,name:$name){id "
	                              "ref(qualifiedName:$ref)" GQL_REF_FIELDS "}}";
	gh_reply rp;
	json_t *vars, *repo, *ref, *target;
	int rc, probe = !g->probed;

	vars = json_pack("{s:s, s:s, s:s}", "owner", g->owner, "name", g->repo, "ref", refname);
	if (!vars)
		return LEASE_ENOMEM;
	rc = gql_post(g, &rp, probe ? q_probe : q, vars, 1, "reading a ref");
	json_decref(vars);
	if (rc < 0)
		return rc;
	if ((rc = gql_read_answer(g, rp.json, probe, "reading a ref", &repo)) < 0)
		goto out;
	ref = json_object_get(repo, "ref");
	if (!json_is_object(ref)) {
		*present = 0;
		goto out;
	}
	if (!gql_ref_is(ref, refname)) {
		gh_log(g, LEASE_LOG_DEBUG,
		       "github: GraphQL answered another ref than %s; asking REST", refname);
		*present = 0;
		goto out;
	}
	target = json_object_get(ref, "target");
	if ((rc = commit_from_gql(commit_out, target, 0)) < 0) {
		lease_commit_clear(commit_out);
		rc = gh_err(g, LEASE_EINTERNAL, "malformed GraphQL answer reading %s", refname);
		goto out;
	}
	*present = 1;
	*oid = commit_out->oid;
	*has_commit = 1;
out:
	reply_clear(&rp);
	return rc;
}

/* The length of the directory the @p n refs share ("refs/<ns>" of
 * "refs/<ns>/<name>"), when they share one that fits snap_prefix; else 0. */
static size_t snap_dir(const char *const *refs, size_t n)
{
	const char *slash = strrchr(refs[0], '/');
	size_t i, len = slash ? (size_t)(slash - refs[0]) : 0;

	if (len < 6 || len >= SNAP_PREFIX_MAX)
		return 0;
	for (i = 1; i < n; i++)
		if (strncmp(refs[i], refs[0], len + 1) != 0 || strchr(refs[i] + len + 1, '/'))
			return 0;
	return len;
}

/* Confirm the absence GraphQL suggested (a null) of the @p n refs @p refs,
 * which share a directory (snap_dir): one REST listing of refs/<ns>*
 * answers every one of them (present[i], oid[i]) and also answers the
 * archive listing each absent one's create asks for next (snap_serve, once
 * per ref). A ref the listing shows that GraphQL did not: GraphQL does not
 * see the namespace, and refs are read through REST from now on (§9). */
static int rest_confirm(gh_transport *g, const char *const *refs, size_t n, int *present,
                        lease_oid *oid)
{
	static const lease_oid zero;
	size_t i, j, len = snap_dir(refs, n);
	int rc;

	snap_drop(g);
	memcpy(g->snap_prefix, refs[0], len);
	g->snap_prefix[len] = '\0';
	if ((rc = rest_list(g, &g->snap, g->snap_prefix + 5)) < 0) {
		snap_drop(g);
		return rc;
	}
	g->snap_ms = mono_ms(g);
	for (i = 0; i < n; i++) {
		present[i] = 0;
		for (j = 0; j < g->snap.count; j++) {
			if (strcmp(g->snap.items[j].refname, refs[i]) == 0) {
				present[i] = 1;
				oid[i] = g->snap.items[j].oid;
			}
		}
		if (!present[i] &&
		    (rc = lease_ref_list_push(&g->snap_absent, refs[i], &zero)) < 0) {
			snap_drop(g);
			return rc;
		}
		if (present[i] && g->sight != GQL_BLIND) {
			gh_log(g, LEASE_LOG_INFO,
			       "github: GraphQL does not see %s; reading refs through REST from "
			       "now on",
			       refs[i]);
			g->sight = GQL_BLIND;
		}
	}
	if (!g->snap_absent.count)
		snap_drop(g);
	return 0;
}

static int gh_read_ref(lease_transport *t, const char *refname, int *present, lease_oid *oid,
                       int *has_commit, lease_commit *commit_out)
{
	gh_transport *g = (gh_transport *)t;
	lease_oid rest_oid;
	int rc, rest_present = 0;

	*present = 0;
	*has_commit = 0;
	memset(oid, 0, sizeof(*oid));
	memset(commit_out, 0, sizeof(*commit_out));
	if ((rc = check_refname(g, refname)) < 0)
		return rc;
	if (g->sight == GQL_BLIND)
		return rest_read_ref(g, refname, present, oid, NULL);
	if ((rc = gql_read_ref(g, refname, present, oid, has_commit, commit_out)) < 0)
		return rc;
	if (*present)
		return 0;
	/* GraphQL's null is never taken for "absent": its view of refs outside
	 * heads/ and tags/ is undocumented (§9, issue 15 #3). */
	if (!snap_dir(&refname, 1))
		return rest_read_ref(g, refname, present, oid, NULL);
	if ((rc = rest_confirm(g, &refname, 1, &rest_present, &rest_oid)) < 0)
		return rc;
	*present = rest_present;
	if (rest_present)
		*oid = rest_oid;
	return 0;
}

/* One GraphQL query for the @p n (<= GQL_REFS_BATCH) refs of @p r: an
 * aliased Repository.ref(qualifiedName:) each, answered as gql_read_ref
 * answers one (the ref asked for, with its commit), the process's first
 * read carrying the schema probe. The refs GraphQL answers null (or with
 * another ref) are confirmed by REST: one listing for all of them when they
 * share a directory (rest_confirm), else a REST read each. */
static int read_refs_batch(gh_transport *g, lease_ref_read *r, size_t n)
{
	const char *unconf[GQL_REFS_BATCH];
	int upresent[GQL_REFS_BATCH], probe = !g->probed, rc;
	lease_oid uoid[GQL_REFS_BATCH];
	size_t idx[GQL_REFS_BATCH], u = 0, i, len, cap;
	char *q = NULL, alias[24];
	json_t *vars = NULL, *repo, *ref;
	gh_reply rp;

	memset(&rp, 0, sizeof(rp));
	cap = 256 + sizeof(GQL_PROBE) + n * (64 + sizeof(GQL_REF_FIELDS));
	if (!(q = malloc(cap)) || !(vars = repo_vars(g))) {
		rc = LEASE_ENOMEM;
		goto out;
	}
	len = (size_t)snprintf(q, cap, "query($owner:String!,$name:String!");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(q + len, cap - len, ",$r%zu:String!", i);
	len += (size_t)snprintf(q + len, cap - len, "){%srepository(owner:$owner,name:$name){id",
	                        probe ? GQL_PROBE " " : "");
	for (i = 0; i < n; i++) {
		len += (size_t)snprintf(q + len, cap - len, " r%zu:ref(qualifiedName:$r%zu)%s", i,
		                        i, GQL_REF_FIELDS);
		snprintf(alias, sizeof(alias), "r%zu", i);
		if (json_object_set_new(vars, alias, json_string(r[i].refname)) < 0) {
			rc = LEASE_ENOMEM;
			goto out;
		}
	}
	snprintf(q + len, cap - len, "}}");
	if ((rc = gql_post(g, &rp, q, vars, 1, "reading a set of refs")) < 0)
		goto out;
	if ((rc = gql_read_answer(g, rp.json, probe, "reading a set of refs", &repo)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		snprintf(alias, sizeof(alias), "r%zu", i);
		ref = json_object_get(repo, alias);
		if (!json_is_object(ref) || !gql_ref_is(ref, r[i].refname)) {
			if (json_is_object(ref))
				gh_log(g, LEASE_LOG_DEBUG,
				       "github: GraphQL answered another ref than %s; asking REST",
				       r[i].refname);
			idx[u] = i;
			unconf[u++] = r[i].refname;
			continue;
		}
		if (commit_from_gql(&r[i].commit, json_object_get(ref, "target"), 0) < 0) {
			lease_commit_clear(&r[i].commit);
			rc = gh_err(g, LEASE_EINTERNAL, "malformed GraphQL answer reading %s",
			            r[i].refname);
			goto out;
		}
		r[i].present = 1;
		r[i].oid = r[i].commit.oid;
		r[i].has_commit = 1;
		r[i].answered = 1;
	}
	reply_clear(&rp);
	if (u && snap_dir(unconf, u)) {
		if ((rc = rest_confirm(g, unconf, u, upresent, uoid)) < 0)
			goto out;
	} else {
		for (i = 0; i < u; i++) {
			upresent[i] = 0;
			if ((rc = rest_read_ref(g, unconf[i], &upresent[i], &uoid[i], NULL)) < 0)
				goto out;
		}
	}
	for (i = 0; i < u; i++) {
		r[idx[i]].present = upresent[i];
		if (upresent[i])
			r[idx[i]].oid = uoid[i];
		r[idx[i]].answered = 1;
	}
out:
	reply_clear(&rp);
	json_decref(vars);
	free(q);
	return rc;
}

/*
 * read_refs (reflease/sys/transport.h version 4; protocol.md "Sets"): the
 * members of a set in one GraphQL query with one aliased
 * `rN:ref(qualifiedName:$rN){prefix name target{...}}` per ref. Schema:
 * Repository.ref(qualifiedName: String!) is a nullable Ref, "Fetch a given
 * ref from the repository" (docs.github.com/en/graphql/reference/objects
 * #repository; octokit/graphql-schema schema.graphql), so a missing ref is
 * `null` beside the others' answers; Ref.target is the GitObject, a Commit's
 * `message`, `committedDate` and `parents(first:1)`. Cost: one request;
 * GraphQL's primary rate limit charges a query the requests its connections
 * may need — here one `parents(first:1)` per ref — divided by 100, rounded,
 * at least 1 point ("Rate limits and query limits for the GraphQL API",
 * docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-
 * graphql-api), so a set of up to GQL_REFS_BATCH refs costs 1 point; the
 * secondary limit counts a query without a mutation as 1 point (of 2,000 a
 * minute). Where GraphQL does not see the namespace (§9), each ref is read
 * as read_ref reads it.
 */
static int gh_read_refs(lease_transport *t, lease_ref_read *r, size_t n)
{
	gh_transport *g = (gh_transport *)t;
	size_t i, start;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = check_refname(g, r[i].refname)) < 0)
			return rc;
	for (start = 0; start < n; start += GQL_REFS_BATCH) {
		size_t m = n - start < GQL_REFS_BATCH ? n - start : GQL_REFS_BATCH;

		if (g->sight == GQL_BLIND) {
			for (i = start; i < start + m; i++) {
				if ((rc = gh_read_ref(t, r[i].refname, &r[i].present, &r[i].oid,
				                      &r[i].has_commit, &r[i].commit)) < 0)
					return rc;
				r[i].answered = 1;
			}
		} else if ((rc = read_refs_batch(g, r + start, m)) < 0) {
			return rc;
		}
	}
	return 0;
}

/* The GitObject selection used for object(oid:) look-ups. */
#define GQL_OBJECT_FRAGMENT                                                                        \
	"fragment C on GitObject{__typename oid ...on Commit{message committedDate "               \
	"parents(first:1){nodes{oid message committedDate parents(first:1){nodes{oid}}}}}}"

static int gh_read_commit(lease_transport *t, lease_commit *out, const lease_oid *oid)
{
	static const char q[] =
	        "query($owner:String!,$name:String!,$oid:GitObjectID!){repository("
	        "owner:$owner,name:$name){id o0:object(oid:$oid){...C}}}" GQL_OBJECT_FRAGMENT;
	gh_transport *g = (gh_transport *)t;
	char hex[LEASE_OID_HEXSZ + 1];
	gh_reply rp;
	json_t *vars, *repo, *obj;
	int rc;

	memset(out, 0, sizeof(*out));
	lease_oid_tohex(hex, oid);
	if (g->sight == GQL_BLIND)
		return rest_read_commit(g, out, oid);
	if (!(vars = json_pack("{ssssss}", "owner", g->owner, "name", g->repo, "oid", hex)))
		return LEASE_ENOMEM;
	rc = gql_post(g, &rp, q, vars, 1, "reading a commit");
	json_decref(vars);
	if (rc < 0)
		return rc;
	if ((rc = gql_repository(g, rp.json, "reading a commit", &repo)) < 0)
		goto out;
	obj = json_object_get(repo, "o0");
	if (!obj || json_is_null(obj)) {
		rc = gh_err(g, LEASE_ENOTFOUND, "object %s not found", hex);
		goto out;
	}
	if ((rc = commit_from_gql(out, obj, 0)) < 0 || !lease_oid_equal(&out->oid, oid)) {
		lease_commit_clear(out);
		rc = gh_err(g, LEASE_EINTERNAL, "malformed GraphQL answer reading %s", hex);
	}
out:
	reply_clear(&rp);
	return rc;
}

/* Fill the listing's commits and parents with GraphQL batches of <= 100
 * aliased object(oid:) look-ups (protocol.md §9). Entries left without a
 * commit are read one by one by the primitives. */
static int prefetch_commits(gh_transport *g, lease_ref_list *l)
{
	size_t start, i, n;
	int rc = 0;

	for (start = 0; start < l->count; start += GQL_BATCH) {
		size_t end = start + GQL_BATCH < l->count ? start + GQL_BATCH : l->count;
		size_t qcap = 256 + (end - start) * 80 + sizeof(GQL_OBJECT_FRAGMENT);
		char *q, hex[LEASE_OID_HEXSZ + 1];
		json_t *vars, *repo;
		gh_reply rp;

		for (i = start; i < end && l->items[i].has_commit; i++)
			;
		if (i == end)
			continue; /* every commit of the batch served (serve_written()) */
		if (!(q = malloc(qcap)))
			return LEASE_ENOMEM;
		n = (size_t)snprintf(q, qcap,
		                     "query($owner:String!,$name:String!){repository(owner:$owner,"
		                     "name:$name){id");
		for (i = start; i < end; i++) {
			if (l->items[i].has_commit)
				continue;
			lease_oid_tohex(hex, &l->items[i].oid);
			n += (size_t)snprintf(q + n, qcap - n, " o%zu:object(oid:\"%s\"){...C}",
			                      i - start, hex);
		}
		snprintf(q + n, qcap - n, "}}" GQL_OBJECT_FRAGMENT);
		if (!(vars = repo_vars(g))) {
			free(q);
			return LEASE_ENOMEM;
		}
		rc = gql_post(g, &rp, q, vars, 1, "reading the namespace");
		json_decref(vars);
		free(q);
		if (rc < 0)
			return rc;
		if ((rc = gql_common_errors(g, rp.json, "reading the namespace")) < 0) {
			reply_clear(&rp);
			return rc;
		}
		repo = json_object_get(json_object_get(rp.json, "data"), "repository");
		remember_repo_id(g, repo);
		for (i = start; i < end && json_is_object(repo); i++) {
			lease_ref_entry *e = &l->items[i];
			char alias[24]; /* "o" + a size_t */
			json_t *obj, *parents;
			if (e->has_commit)
				continue;
			snprintf(alias, sizeof(alias), "o%zu", i - start);
			obj = json_object_get(repo, alias);
			if (!json_is_object(obj))
				continue;
			if (commit_from_gql(&e->commit, obj, 0) < 0 ||
			    !lease_oid_equal(&e->commit.oid, &e->oid)) {
				lease_commit_clear(&e->commit);
				continue;
			}
			e->has_commit = 1;
			parents = json_object_get(json_object_get(obj, "parents"), "nodes");
			if (!e->commit.has_parent || !json_array_size(parents))
				continue;
			if (commit_from_gql(&e->parent_commit, json_array_get(parents, 0), 1) < 0)
				lease_commit_clear(&e->parent_commit);
			else
				e->has_parent_commit = 1;
		}
		reply_clear(&rp);
	}
	return rc;
}

static int gh_list_refs(lease_transport *t, lease_ref_list *out, const char *prefix)
{
	gh_transport *g = (gh_transport *)t;
	int rc;

	if ((rc = check_refname(g, prefix)) < 0)
		return rc;
	if (!snap_serve(g, out, prefix, &rc) && rc == 0)
		rc = rest_list(g, out, prefix + 5);
	note_held(g, out->count);
	if (rc == 0)
		rc = serve_written(g, out);
	if (rc == 0 && out->count > 0 && g->sight != GQL_BLIND)
		rc = prefetch_commits(g, out);
	return rc;
}

/* list_refs_each (issue 29): the listing's pages re-cut into parts of
 * GQL_BATCH refs, each prefetched by one GraphQL request (as many as
 * gh_list_refs spends on the whole listing) and handed over before the next
 * page is asked for. Held at once: one page plus fewer than GQL_BATCH refs
 * carried over. On github.com the matching-refs answer is not paginated
 * (one page, whatever its size: github/docs#3863, google/go-github#1567),
 * so there the refs' names and oids arrive at once; their commits are still
 * read GQL_BATCH at a time. */
typedef struct gh_stream {
	lease_ref_list carry; /* refs waiting for a full part */
	int (*part)(lease_ref_list *l, void *payload);
	void *payload;
} gh_stream;

/* Hand over the first @p n refs of the carry as one part. */
static int stream_hand(gh_transport *g, gh_stream *s, size_t n)
{
	lease_ref_list part = {NULL, 0, 0};
	int rc = 0;

	if (!(part.items = malloc(n * sizeof(*part.items))))
		return LEASE_ENOMEM;
	memcpy(part.items, s->carry.items, n * sizeof(*part.items));
	part.count = part.cap = n;
	s->carry.count -= n;
	memmove(s->carry.items, s->carry.items + n, s->carry.count * sizeof(*part.items));
	if (g->sight != GQL_BLIND)
		rc = prefetch_commits(g, &part);
	if (rc == 0)
		rc = s->part(&part, s->payload);
	lease_ref_list_clear(&part);
	return rc;
}

/* rest_list_pages' page callback: carry the page, hand over full parts. */
static int stream_page(gh_transport *g, lease_ref_list *page, void *payload)
{
	gh_stream *s = payload;
	int rc;

	note_held(g, s->carry.count + page->count);
	if ((rc = list_take(&s->carry, page)) < 0)
		return rc;
	while (rc == 0 && s->carry.count >= GQL_BATCH)
		rc = stream_hand(g, s, GQL_BATCH);
	return rc;
}

static int gh_list_refs_each(lease_transport *t, const char *prefix,
                             int (*part)(lease_ref_list *l, void *payload), void *payload)
{
	gh_transport *g = (gh_transport *)t;
	lease_ref_list served = {NULL, 0, 0};
	gh_stream s;
	int rc;

	if ((rc = check_refname(g, prefix)) < 0)
		return rc;
	memset(&s, 0, sizeof(s));
	s.part = part;
	s.payload = payload;
	if (snap_serve(g, &served, prefix, &rc)) {
		if (rc == 0)
			rc = stream_page(g, &served, &s);
	} else if (rc == 0) {
		rc = rest_list_pages(g, prefix + 5, stream_page, &s);
	}
	if (rc == 0 && s.carry.count)
		rc = stream_hand(g, &s, s.carry.count);
	lease_ref_list_clear(&served);
	lease_ref_list_clear(&s.carry);
	return rc;
}

/* wait_change: a conditional read of the ref every GH_POLL_MS (protocol.md §5
 * "Waiting"; an unchanged ref answers 304, free of the primary rate limit). */
static int gh_probe(lease_transport *t, const char *refname, lease_probe *p)
{
	lease_oid oid;
	int present = 0, rc;

	memset(&oid, 0, sizeof(oid));
	if ((rc = rest_read_ref((gh_transport *)t, refname, &present, &oid, p)) < 0) {
		/* a failed answer (a malformed 200 included) leaves no validator:
		 * p->present and p->oid still hold the state of the last one */
		p->etag[0] = '\0';
		return rc;
	}
	if (p->not_modified)
		return 0;
	p->present = present;
	p->oid = oid;
	return 0;
}

/* The validator kept for @p refname, else the least recently used one,
 * emptied for it (GH_PROBES refs are read conditionally at once). */
static lease_probe *probe_for(gh_transport *g, const char *refname)
{
	size_t i, lru = 0;

	for (i = 0; i < GH_PROBES; i++) {
		if (strcmp(g->poll[i].etag_ref, refname) == 0)
			break;
		if (g->poll_used[i] < g->poll_used[lru])
			lru = i;
	}
	if (i == GH_PROBES) {
		i = lru;
		memset(&g->poll[i], 0, sizeof(g->poll[i]));
	}
	g->poll_used[i] = ++g->poll_tick;
	return &g->poll[i];
}

/* read_ref_oid (transport.h, version 3): the conditional REST read of
 * wait_change, sharing its validator. The re-read after a write is such a
 * read (a 200 with the new ETag, in place of the GraphQL read), so the
 * heartbeat service's re-reads of the ref it wrote are 304s until someone
 * else moves it (protocol.md §6). */
static int gh_read_ref_oid(lease_transport *t, const char *refname, int *present, lease_oid *oid)
{
	gh_transport *g = (gh_transport *)t;
	lease_probe *p;
	int rc;

	if ((rc = check_refname(g, refname)) < 0)
		return rc;
	p = probe_for(g, refname);
	p->not_modified = 0;
	if ((rc = gh_probe(t, refname, p)) < 0)
		return rc;
	*present = p->present;
	*oid = p->oid;
	return 0;
}

static int gh_wait_change(lease_transport *t, const char *refname, int known_present,
                          const lease_oid *known_oid, int timeout_ms)
{
	gh_transport *g = (gh_transport *)t;

	return lease__poll_ref_change(t, &g->clock, probe_for(g, refname), gh_probe, refname,
	                              known_present, known_oid, timeout_ms, GH_POLL_MS);
}

/* 1 when the listing @p list (a matching-refs answer) shows one of the @p n
 * refs of @p known otherwise than known (present and oid). */
static int listing_differs(const json_t *list, const lease_ref_read *known, size_t n)
{
	size_t i, j, seen = 0, present = 0;
	json_t *e;

	for (j = 0; j < n; j++)
		present += known[j].present != 0;
	json_array_foreach(list, i, e)
	{
		const char *ref = json_string_value(json_object_get(e, "ref"));
		const char *sha =
		        json_string_value(json_object_get(json_object_get(e, "object"), "sha"));
		lease_oid oid;

		if (!ref || !sha || lease_oid_fromhex(&oid, sha) < 0)
			return 1; /* malformed: let the caller read */
		for (j = 0; j < n && strcmp(known[j].refname, ref) != 0; j++)
			;
		if (j == n)
			continue; /* not watched */
		if (!known[j].present || !lease_oid_equal(&known[j].oid, &oid))
			return 1;
		seen++;
	}
	return seen != present; /* a known ref is gone */
}

/* One conditional GET of the listing of @p prefix (wait_refs_change): *@p changed
 * 1 when it shows a ref of @p known otherwise; a 304 (the listing as last
 * answered, not counted by GitHub) is no change. */
static int list_probe(gh_transport *g, const char *prefix, const lease_ref_read *known, size_t n,
                      int *changed)
{
	char suffix[400];
	gh_reply rp;
	int rc;

	*changed = 0;
	snprintf(suffix, sizeof(suffix), "git/matching-refs/%s", prefix + 5);
	if (g->lpoll.etag[0] && strcmp(g->lpoll.etag_ref, prefix) == 0)
		lease__http_set_if_none_match(g->http, g->lpoll.etag);
	rc = rest_call(g, &rp, "GET", suffix, NULL, 1);
	lease__http_set_if_none_match(g->http, ""); /* never left for another GET */
	if (rc < 0)
		return rc;
	g->lpoll.etag[0] = '\0';
	if (rp.r.status == 304) {
		snprintf(g->lpoll.etag, sizeof(g->lpoll.etag), "%s", rp.r.etag);
	} else if (rp.r.status == 200 && json_is_array(rp.json)) {
		/* a listing longer than a page is not compared: read again */
		*changed = rp.r.next_url[0] || listing_differs(rp.json, known, n);
		snprintf(g->lpoll.etag, sizeof(g->lpoll.etag), "%s", rp.r.etag);
	} else if ((rc = common_status(g, &rp, "listing refs")) == 0) {
		rc = unexpected_status(g, &rp, "listing refs");
	}
	snprintf(g->lpoll.etag_ref, sizeof(g->lpoll.etag_ref), "%s", prefix);
	reply_clear(&rp);
	return rc;
}

/* wait_refs_change (version 5): list_probe() every GH_POLL_MS (jittered, never
 * growing) until a ref of @p known shows otherwise or @p timeout_ms passed,
 * and once more at the end (a 304, free), so that 0 means "unchanged when the
 * wait ended": the caller need not read again. A failed probe is not a change. */
static int gh_wait_refs_change(lease_transport *t, const char *prefix, const lease_ref_read *known,
                               size_t n, int timeout_ms)
{
	gh_transport *g = (gh_transport *)t;
	int64_t end = mono_ms(g) + (timeout_ms > 0 ? timeout_ms : 0);

	if (strncmp(prefix, "refs/", 5) != 0)
		return gh_err(g, LEASE_EINVALID, "not a ref prefix: %s", prefix);
	for (;;) {
		int64_t now = mono_ms(g), nap = lease__jittered_ms(GH_POLL_MS);
		int changed = 0;

		if (now + nap >= end) {
			if (lease__env_sleep_ms(&g->clock, end - now, LEASE_SLEEP_INTERRUPTIBLE) <
			    0)
				return 1;
			/* the look at the end: a failed one leaves it to the caller */
			return list_probe(g, prefix, known, n, &changed) < 0 || changed;
		}
		if (lease__env_sleep_ms(&g->clock, nap, LEASE_SLEEP_INTERRUPTIBLE) < 0)
			return 1; /* a signal: let the caller look at it */
		if (list_probe(g, prefix, known, n, &changed) == 0 && changed)
			return 1;
	}
}

/* Pacing (issue 15 #7, issue 24 #4): GitHub asks for at least one second
 * between content-creating requests in bursts ("Best practices for using
 * the REST API": about 1 s between POST, PATCH, PUT, DELETE requests; at most
 * 80 content-generating requests a minute, "Rate limits for the REST API",
 * secondary limits). The store calls this before each operation of a burst
 * (lease__store_pace): it waits until @p gap_ms after the last
 * content-creating request and puts the transport into burst mode, where
 * every later content-creating request — the two of one operation too —
 * waits the same (pace_write): >= 1 s apart, so never more than 60 in any
 * 60 s. A lone operation is never paced. With @p gap_ms 0 it only reports.
 * The clock is the store options' (mono_ms(), sleep_ms(): a test's virtual
 * time, like every wait of this transport). Returns the milliseconds waited here plus
 * those waited between writes since the last call. */
static int64_t gh_pace(lease_transport *t, int64_t gap_ms)
{
	gh_transport *g = (gh_transport *)t;
	int64_t wait, inner = g->paced_ms;

	if (gap_ms <= 0)
		return inner; /* a look only (lease__store_paced_ms) */
	g->burst = 1;
	g->paced_ms = 0;
	if (g->last_write_ms <= 0)
		return inner;
	wait = g->last_write_ms + gap_ms - mono_ms(g);
	if (wait <= 0)
		return inner;
	sleep_ms(g, wait);
	return inner + wait;
}

static int gh_now(lease_transport *t, int64_t *out)
{
	gh_transport *g = (gh_transport *)t;

	/* Before the first answer there is no Date header: the local clock (no
	 * request is spent on it; every operation reads before it decides). */
	*out = server_now(g);
	return 0;
}

static const char *gh_last_error(lease_transport *t)
{
	gh_transport *g = (gh_transport *)t;

	return g->errmsg[0] ? g->errmsg : NULL;
}

static void gh_free(lease_transport *t)
{
	gh_transport *g = (gh_transport *)t;
	size_t i;

	if (!g)
		return;
	lease__http_free(g->http);
	snap_drop(g);
	for (i = 0; i < GH_WRITTEN; i++)
		lease_commit_clear(&g->written[i]);
	free(g->api);
	free(g->graphql);
	free(g->token_file);
	free(g->ca_file);
	free(g->ca_from);
	free(g->ca_dir);
	free(g);
}

/* set_deadline (version 5): the running operation ends @p ms from now on the
 * transport's clock (the store options' clock); <= 0 clears it (each request
 * then gets the timeout from its own start). */
static void gh_set_deadline(lease_transport *t, int64_t ms)
{
	gh_transport *g = (gh_transport *)t;

	g->op_deadline_ms = ms > 0 ? mono_ms(g) + ms : 0;
}

size_t lease__github_budgets(const lease_transport *t, lease_budget *out, size_t max)
{
	if (!t || t->free != gh_free)
		return 0;
	return lease__gh_budget_copy(&((const gh_transport *)t)->budgets, out, max);
}

size_t lease__github_listing_peak(lease_transport *t, int reset)
{
	gh_transport *g = (gh_transport *)t;
	size_t peak;

	if (!t || t->free != gh_free)
		return 0;
	peak = g->list_peak;
	if (reset)
		g->list_peak = 0;
	return peak;
}

lease_http *lease__github_http(lease_transport *t)
{
	return t && t->free == gh_free ? ((gh_transport *)t)->http : NULL;
}

void lease__github_set_rest_only(lease_transport *t)
{
	if (t && t->free == gh_free)
		((gh_transport *)t)->sight = GQL_BLIND;
}

/* ---- construction ------------------------------------------------------------- */

static char *strip_slash(const char *s)
{
	size_t n = strlen(s);
	char *r;

	while (n > 0 && s[n - 1] == '/')
		n--;
	if (!(r = malloc(n + 1)))
		return NULL;
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

/* GraphQL endpoint for a REST base: https://api.github.com → .../graphql;
 * GHES https://host/api/v3 → https://host/api/graphql. */
static char *derive_graphql(const char *api)
{
	size_t n = strlen(api), cap = n + 16;
	char *r = malloc(cap);

	if (!r)
		return NULL;
	if (n >= 7 && strcmp(api + n - 7, "/api/v3") == 0)
		snprintf(r, cap, "%.*s/api/graphql", (int)(n - 7), api);
	else
		snprintf(r, cap, "%s/graphql", api);
	return r;
}

static int valid_slug(const char *s, size_t len, size_t max)
{
	size_t i;

	if (len == 0 || len > max || (len == 1 && s[0] == '.') ||
	    (len == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* @p v when it is set and not empty, else NULL. */
static const char *nonempty(const char *v)
{
	return v && *v ? v : NULL;
}

/* Read a token file into @p buf (trailing newline and spaces dropped).
 * @return 0, LEASE_ECONFIG naming the file */
static int read_token_file(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		lease__error_set(err, errlen, "REFLEASE_GITHUB_TOKEN_FILE %.300s: %s", path,
		                 strerror(errno));
		return LEASE_ECONFIG;
	}
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (!n) {
		lease__error_set(err, errlen,
		                 "REFLEASE_GITHUB_TOKEN_FILE %.300s is empty; put the GitHub token "
		                 "in it",
		                 path);
		return LEASE_ECONFIG;
	}
	return 0;
}

/* The transport's calls and figures (protocol.md §4, §9). */
static const lease_transport gh_vtable = {
        .version = LEASE_TRANSPORT_VERSION,
        .kind = "github",
        .skew_margin_s = 5,
        .ttl_min_s = 60,
        .verify_window_ms = 10000,
        .write_commit = gh_write_commit,
        .create_ref = gh_create_ref,
        .replace_ref = gh_replace_ref,
        .delete_ref = gh_delete_ref,
        .read_ref = gh_read_ref,
        .read_commit = gh_read_commit,
        .list_refs = gh_list_refs,
        .now = gh_now,
        .last_error = gh_last_error,
        .free = gh_free,
        .wait_change = gh_wait_change,
        .read_ref_oid = gh_read_ref_oid,
        .pace = gh_pace,
        .cas_many = gh_cas_many,
        .list_refs_each = gh_list_refs_each,
        .read_refs = gh_read_refs,
        .set_deadline = gh_set_deadline,
        .wait_refs_change = gh_wait_refs_change,
};

int lease__github_transport_new(lease_transport **out, const char *arg,
                                const lease_store_options *opts, char *err, size_t errlen)
{
	gh_transport *g = NULL;
	const char *slash, *token = NULL, *api = NULL, *gql = NULL, *tf = NULL;
	char file_token[512] = "";
	int rc;

	*out = NULL;
	slash = arg ? strchr(arg, '/') : NULL;
	if (!slash || !valid_slug(arg, (size_t)(slash - arg), 39) ||
	    !valid_slug(slash + 1, strlen(slash + 1), 100)) {
		lease__error_set(err, errlen,
		                 "invalid store 'github:%.200s': expected github:OWNER/REPO",
		                 arg ? arg : "");
		return LEASE_EINVALID;
	}
	if (!(g = calloc(1, sizeof(*g))))
		return LEASE_ENOMEM;
	g->base = gh_vtable;
	if (opts) {
		g->clock = opts->clock;
		g->random = opts->random;
		g->log = opts->log;
		g->log_payload = opts->log_payload;
		g->log_level = opts->log_level;
		tf = nonempty(opts->github_token_file);
		api = nonempty(opts->github_api_url);
		gql = nonempty(opts->github_graphql_url);
	}
	rc = LEASE_ENOMEM;
	if (opts && ((nonempty(opts->ca_bundle) && !(g->ca_file = strdup(opts->ca_bundle))) ||
	             (nonempty(opts->ca_bundle_source) && g->ca_file &&
	              !(g->ca_from = strdup(opts->ca_bundle_source))) ||
	             (nonempty(opts->ca_dir) && !(g->ca_dir = strdup(opts->ca_dir)))))
		goto fail;
	/* A token file (the CLI's --token-file / REFLEASE_GITHUB_TOKEN_FILE) is
	 * read again on a 401: a rotated token is picked up (issue 24 #6). */
	if (tf && !(g->token_file = strdup(tf)))
		goto fail;
	if (opts && nonempty(opts->github_token)) {
		token = opts->github_token;
	} else if (g->token_file) {
		if ((rc = read_token_file(g->token_file, file_token, sizeof(file_token), err,
		                          errlen)) < 0)
			goto fail;
		token = file_token;
	} else {
		lease__error_set(err, errlen, "%s",
		                 "no GitHub token: set GITHUB_TOKEN (or REFLEASE_GITHUB_TOKEN, or "
		                 "use --token-file FILE)");
		rc = LEASE_ECONFIG;
		goto fail;
	}
	if (!api)
		api = "https://api.github.com";
	if ((rc = lease__http_check_url(api, err, errlen)) < 0)
		goto fail;
	if ((rc = lease__http_new(&g->http, token, err, errlen)) < 0)
		goto fail;
	lease__http_set_clock(g->http, &g->clock);
	lease__http_set_ca(g->http, g->ca_file, g->ca_dir);
	rc = LEASE_ENOMEM;
	if (!(g->api = strip_slash(api)))
		goto fail;
	/* One origin for the token (issue 24 #2): GraphQL is derived from the
	 * API URL as @actions/github and @octokit/graphql do; a
	 * GITHUB_GRAPHQL_URL (every Actions runner exports one) is used only on
	 * the API's own origin, else ignored with a warning. */
	if (gql && !lease__http_same_origin(gql, g->api)) {
		gh_log(g, LEASE_LOG_WARN,
		       "github: GITHUB_GRAPHQL_URL %.300s is not on the origin of the API URL "
		       "%.300s: ignored (the token goes to the API's origin only); GraphQL "
		       "at the API's own endpoint",
		       gql, g->api);
		gql = NULL;
	}
	if (!(g->graphql = gql ? strip_slash(gql) : derive_graphql(g->api)))
		goto fail;
	snprintf(g->repo_base, sizeof(g->repo_base), "%s/repos/%.*s/%s", g->api, (int)(slash - arg),
	         arg, slash + 1);
	if ((rc = lease__http_check_url(g->graphql, err, errlen)) < 0)
		goto fail;
	snprintf(g->owner, sizeof(g->owner), "%.*s", (int)(slash - arg), arg);
	snprintf(g->repo, sizeof(g->repo), "%s", slash + 1);
	g->timeout_s = opts && opts->timeout_s > 0 ? opts->timeout_s : 120;
	wipe_buf(file_token, sizeof(file_token));
	*out = &g->base;
	return 0;
fail:
	wipe_buf(file_token, sizeof(file_token));
	gh_free(&g->base);
	return rc;
}
