/* HTTP client of the GitHub backend: one reused libcurl handle, bounded
 * bodies, loopback-only plain http, a credential that never leaves this file
 * except inside the Authorization header (protocol.md §9 github).
 *
 * libcurl is the one library only github: stores use, and with its TLS, SSH,
 * LDAP, Kerberos ... tree the largest part of a start-up (issue 43): it is not
 * linked but dlopen()ed on the first github: store (lease__http_global_init),
 * and called through the table below, as git keeps it in git-remote-https.
 * curl.h gives the types and constants only. */
#include "http.h"

#include "reflease/common.h"
#include "reflease/store.h"
#include "util/util.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#ifndef REFLEASE_VERSION
#define REFLEASE_VERSION "0"
#endif
/* The soname of the libcurl built against (the Makefile reads it from the
 * development library); Debian's libcurl4-openssl-dev: libcurl.so.4. */
#ifndef REFLEASE_CURL_SONAME
#define REFLEASE_CURL_SONAME "libcurl.so.4"
#endif

/* The libcurl functions this file calls, each as curl.h declares it. */
#define CURL_FUNCS(X)                                                                              \
	X(global_init)                                                                             \
	X(easy_init)                                                                               \
	X(easy_setopt)                                                                             \
	X(easy_perform)                                                                            \
	X(easy_getinfo)                                                                            \
	X(easy_cleanup)                                                                            \
	X(easy_strerror)                                                                           \
	X(slist_append)                                                                            \
	X(slist_free_all)                                                                          \
	X(url)                                                                                     \
	X(url_set)                                                                                 \
	X(url_get)                                                                                 \
	X(url_cleanup)                                                                             \
	X(free)                                                                                    \
	X(getdate)

static struct {
#define CURL_FN_DECL(f) __typeof__(curl_##f) *f;
	CURL_FUNCS(CURL_FN_DECL)
#undef CURL_FN_DECL
} cu;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static const char *curl_soname = REFLEASE_CURL_SONAME;
static char curl_error[512]; /* why libcurl is unusable; "" once loaded */

/* The Debian package that carries @p soname (for the error's advice). */
static const char *curl_package(const char *soname)
{
	if (strstr(soname, "gnutls"))
		return "libcurl3-gnutls";
	if (strstr(soname, "nss"))
		return "libcurl3-nss";
	return "libcurl4";
}

static void curl_load(void)
{
	void *so = dlopen(curl_soname, RTLD_NOW | RTLD_LOCAL), *sym;
	const char *missing = NULL;

	snprintf(curl_error, sizeof(curl_error), "%s", "");
	if (!so) {
		const char *why = dlerror();
		snprintf(curl_error, sizeof(curl_error),
		         "cannot load libcurl (%s), which github: stores use: %s; install it "
		         "(Debian: apt-get install %s)",
		         curl_soname, why ? why : "not found", curl_package(curl_soname));
		return;
	}
#define CURL_FN_LOAD(f)                                                                            \
	if (!missing && !(sym = dlsym(so, "curl_" #f)))                                            \
		missing = "curl_" #f;                                                              \
	else if (!missing)                                                                         \
		memcpy(&cu.f, &sym, sizeof(sym));
	CURL_FUNCS(CURL_FN_LOAD)
#undef CURL_FN_LOAD
	if (missing)
		snprintf(curl_error, sizeof(curl_error),
		         "the libcurl loaded (%s) has no %s: it is older than the 7.88 reflease "
		         "was built against; install a newer one (Debian: apt-get install %s)",
		         curl_soname, missing, curl_package(curl_soname));
	else if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		snprintf(curl_error, sizeof(curl_error), "libcurl (%s) could not be initialised",
		         curl_soname);
	if (curl_error[0])
		memset(&cu, 0, sizeof(cu));
}

int lease__http_global_init(char *err, size_t errlen)
{
	pthread_once(&curl_once, curl_load);
	if (!curl_error[0])
		return 0;
	lease__error_set(err, errlen, "%s", curl_error);
	return LEASE_ECONFIG;
}

void lease__http_set_soname(const char *soname)
{
	curl_soname = soname;
}

struct lease_http {
	CURL *curl;
	struct curl_slist *headers;      /* GET: no Content-Type */
	struct curl_slist *json_headers; /* with a JSON body */
	char *token;
	size_t token_len;
	size_t cap;
	unsigned long requests;
	lease_http_response *cur; /* response being received */
	size_t body_alloc;
	char errbuf[CURL_ERROR_SIZE];
	lease_http_responder responder; /* test hook: answers instead of the network */
	void *responder_payload;
	char if_none_match[128]; /* sent with the next GET only ("" = none) */
	lease_clock clock;       /* the store options' clock (lease__http_set_clock) */
};

static void wipe(char *p, size_t n)
{
	volatile char *v = p;

	while (n--)
		*v++ = 0;
}

/* 0 https, 1 http towards loopback, LEASE_ECONFIG otherwise. */
static int classify_url(const char *url, char *err, size_t errlen)
{
	CURLU *u = NULL;
	char *scheme = NULL, *host = NULL;
	int rc = LEASE_ECONFIG;

	if (!url || !*url) {
		lease__error_set(err, errlen, "%s", "empty GitHub API URL");
		return LEASE_ECONFIG;
	}
	if (!(u = cu.url()))
		return LEASE_ENOMEM;
	if (cu.url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    cu.url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    cu.url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		lease__error_set(err, errlen, "invalid GitHub API URL '%s'", url);
		goto out;
	}
	if (strcasecmp(scheme, "https") == 0)
		rc = 0;
	else if (strcasecmp(scheme, "http") == 0 && lease__host_is_loopback(host))
		rc = 1;
	else if (strcasecmp(scheme, "http") == 0)
		lease__error_set(
		        err, errlen,
		        "refusing plain http:// to '%s': use https (http is accepted only for "
		        "loopback addresses)",
		        host);
	else
		lease__error_set(err, errlen, "unsupported URL scheme in '%s' (expected https://)",
		                 url);
out:
	cu.free(host);
	cu.free(scheme);
	cu.url_cleanup(u);
	return rc;
}

/* "scheme://host:port" of @p url (default port filled in), lower-case
 * scheme and host; 0, or -1 when it does not parse. */
static int url_origin(const char *url, char *out, size_t outlen)
{
	CURLU *u = cu.url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	int rc = -1;
	size_t i;

	if (u && cu.url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    cu.url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    cu.url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    cu.url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
	    (size_t)snprintf(out, outlen, "%s://%s:%s", scheme, host, port) < outlen) {
		for (i = 0; out[i]; i++)
			if (out[i] >= 'A' && out[i] <= 'Z')
				out[i] = (char)(out[i] - 'A' + 'a');
		rc = 0;
	}
	cu.free(port);
	cu.free(host);
	cu.free(scheme);
	cu.url_cleanup(u);
	return rc;
}

int lease__http_same_origin(const char *a, const char *b)
{
	char oa[600], ob[600];

	return lease__http_global_init(NULL, 0) == 0 && url_origin(a, oa, sizeof(oa)) == 0 &&
	       url_origin(b, ob, sizeof(ob)) == 0 && strcmp(oa, ob) == 0;
}

int lease__http_check_url(const char *url, char *err, size_t errlen)
{
	int rc = lease__http_global_init(err, errlen);

	if (rc == 0)
		rc = classify_url(url, err, errlen);
	return rc < 0 ? rc : 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	lease_http *h = userdata;
	lease_http_response *r = h->cur;
	size_t n = size * nmemb;
	char *p;

	if (n > h->cap || r->body_len > h->cap - n) {
		r->body_overflow = 1;
		return 0; /* aborts the transfer (CURLE_WRITE_ERROR) */
	}
	if (r->body_len + n + 1 > h->body_alloc) {
		size_t want = h->body_alloc ? h->body_alloc : 4096;
		while (want < r->body_len + n + 1)
			want *= 2;
		if (!(p = realloc(r->body, want)))
			return 0;
		r->body = p;
		h->body_alloc = want;
	}
	memcpy(r->body + r->body_len, data, n);
	r->body_len += n;
	r->body[r->body_len] = '\0';
	return n;
}

/* Value of header line @p line if its name is @p name (case-insensitive), else NULL. */
static const char *header_value(const char *line, size_t len, const char *name, char *buf,
                                size_t buflen)
{
	size_t n = strlen(name), i, j;

	if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	for (i = n + 1; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	for (j = len; j > i && (line[j - 1] == '\r' || line[j - 1] == '\n' || line[j - 1] == ' ');
	     j--)
		;
	if (j - i >= buflen)
		return NULL;
	memcpy(buf, line + i, j - i);
	buf[j - i] = '\0';
	return buf;
}

static long parse_long(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || v < 0)
		return -1;
	return v;
}

static void reset_headers(lease_http_response *r)
{
	r->next_url[0] = '\0';
	r->location[0] = '\0';
	r->date = -1;
	r->retry_after = -1;
	r->rl_remaining = -1;
	r->rl_reset = -1;
	r->rl_limit = -1;
	r->rl_used = -1;
	r->rl_resource[0] = '\0';
	r->etag[0] = '\0';
}

/* From a Link header value, the URL whose rel is "next". */
static void link_next(lease_http_response *r, const char *v, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t start, end, k;
		while (i < len && v[i] != '<')
			i++;
		if (i >= len)
			return;
		start = ++i;
		while (i < len && v[i] != '>')
			i++;
		if (i >= len)
			return;
		end = i;
		while (i < len && v[i] != ',')
			i++;
		for (k = end; k + 10 <= i && end - start < sizeof(r->next_url); k++) {
			if (strncmp(v + k, "rel=\"next\"", 10) == 0) {
				memcpy(r->next_url, v + start, end - start);
				r->next_url[end - start] = '\0';
				return;
			}
		}
	}
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
	lease_http *h = userdata;
	lease_http_response *r = h->cur;
	size_t n = size * nmemb;
	char buf[128];
	const char *v;

	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		reset_headers(r); /* a new response (after 100 Continue, say) */
	} else if ((v = header_value(data, n, "date", buf, sizeof(buf)))) {
		time_t t = cu.getdate(v, NULL);
		r->date = t < 0 ? -1 : (int64_t)t;
	} else if ((v = header_value(data, n, "retry-after", buf, sizeof(buf)))) {
		r->retry_after = parse_long(v);
		if (r->retry_after < 0) { /* an HTTP-date */
			time_t t = cu.getdate(v, NULL);
			if (t >= 0 && r->date >= 0)
				r->retry_after = t > r->date ? (long)(t - r->date) : 0;
		}
	} else if ((v = header_value(data, n, "x-ratelimit-remaining", buf, sizeof(buf)))) {
		r->rl_remaining = parse_long(v);
	} else if ((v = header_value(data, n, "x-ratelimit-reset", buf, sizeof(buf)))) {
		r->rl_reset = parse_long(v);
	} else if ((v = header_value(data, n, "x-ratelimit-limit", buf, sizeof(buf)))) {
		r->rl_limit = parse_long(v);
	} else if ((v = header_value(data, n, "x-ratelimit-used", buf, sizeof(buf)))) {
		r->rl_used = parse_long(v);
	} else if ((v = header_value(data, n, "x-ratelimit-resource", buf, sizeof(buf)))) {
		snprintf(r->rl_resource, sizeof(r->rl_resource), "%s", v);
	} else if ((v = header_value(data, n, "etag", buf, sizeof(buf)))) {
		snprintf(r->etag, sizeof(r->etag), "%s", v);
	} else if (n > 9 && strncasecmp(data, "location:", 9) == 0) {
		/* too long a value is dropped: the redirect is then not followed */
		if (!header_value(data, n, "location", r->location, sizeof(r->location)))
			r->location[0] = '\0';
	} else if (n > 5 && strncasecmp(data, "link:", 5) == 0) {
		link_next(r, data + 5, n - 5);
	}
	return n;
}

static struct curl_slist *add_header(struct curl_slist *l, const char *line, int *ok)
{
	struct curl_slist *n = cu.slist_append(l, line);

	if (!n) {
		*ok = 0;
		return l;
	}
	return n;
}

void lease__http_set_ca(lease_http *h, const char *file, const char *dir)
{
	/* as curl: a bundle that cannot be read fails https requests only
	 * (CURLE_SSL_CACERT_BADFILE, reported at once as a TLS failure) */
	if (file && *file)
		cu.easy_setopt(h->curl, CURLOPT_CAINFO, file);
	if (dir && *dir)
		cu.easy_setopt(h->curl, CURLOPT_CAPATH, dir);
}

void lease__http_set_clock(lease_http *h, const lease_clock *clk)
{
	if (clk)
		h->clock = *clk;
	else
		memset(&h->clock, 0, sizeof(h->clock));
}

/* Free the header lists, wiping the credential they hold first. */
static void drop_headers(lease_http *h)
{
	if (h->headers)
		wipe(h->headers->data, strlen(h->headers->data));
	if (h->json_headers)
		wipe(h->json_headers->data, strlen(h->json_headers->data));
	cu.slist_free_all(h->headers);
	cu.slist_free_all(h->json_headers);
	h->headers = h->json_headers = NULL;
	if (h->token) {
		wipe(h->token, h->token_len);
		free(h->token);
		h->token = NULL;
		h->token_len = 0;
	}
}

/* Take @p token (trimmed, checked) and build both header lists from it. */
static int set_token(lease_http *h, const char *token, char *err, size_t errlen)
{
	char *auth = NULL;
	int ok = 1;
	size_t i, n = 0, start = 0;

	drop_headers(h);
	if (token) {
		n = strlen(token);
		while (start < n && (token[start] == ' ' || token[start] == '\t' ||
		                     token[start] == '\r' || token[start] == '\n'))
			start++;
		while (n > start && (token[n - 1] == ' ' || token[n - 1] == '\t' ||
		                     token[n - 1] == '\r' || token[n - 1] == '\n'))
			n--;
		for (i = start; i < n; i++) {
			unsigned char c = (unsigned char)token[i];
			if (c <= 0x20 || c >= 0x7f) {
				lease__error_set(err, errlen, "%s",
				                 "the GitHub token contains whitespace or control "
				                 "characters");
				return LEASE_ECONFIG;
			}
		}
		if (n > start) {
			if (!(h->token = malloc(n - start + 1)))
				return LEASE_ENOMEM;
			memcpy(h->token, token + start, n - start);
			h->token[n - start] = '\0';
			h->token_len = n - start;
		}
	}
	if (h->token) {
		size_t alen = h->token_len + sizeof("Authorization: Bearer ");
		if (!(auth = malloc(alen)))
			return LEASE_ENOMEM;
		snprintf(auth, alen, "Authorization: Bearer %s", h->token);
		h->headers = add_header(h->headers, auth, &ok);
		h->json_headers = add_header(h->json_headers, auth, &ok);
		wipe(auth, alen);
		free(auth);
	}
	h->headers = add_header(h->headers, "Accept: application/vnd.github+json", &ok);
	h->headers = add_header(h->headers, "X-GitHub-Api-Version: 2022-11-28", &ok);
	h->json_headers = add_header(h->json_headers, "Accept: application/vnd.github+json", &ok);
	h->json_headers = add_header(h->json_headers, "X-GitHub-Api-Version: 2022-11-28", &ok);
	h->json_headers = add_header(h->json_headers, "Content-Type: application/json", &ok);
	h->json_headers = add_header(h->json_headers, "Expect:", &ok);
	return ok ? 0 : LEASE_ENOMEM;
}

int lease__http_set_token(lease_http *h, const char *token, char *err, size_t errlen)
{
	return set_token(h, token, err, errlen);
}

int lease__http_token_is(const lease_http *h, const char *token)
{
	size_t n = token ? strlen(token) : 0, start = 0;

	while (start < n && (token[start] == ' ' || token[start] == '\t' || token[start] == '\r' ||
	                     token[start] == '\n'))
		start++;
	while (n > start && (token[n - 1] == ' ' || token[n - 1] == '\t' || token[n - 1] == '\r' ||
	                     token[n - 1] == '\n'))
		n--;
	if (!h->token)
		return n == start;
	return h->token_len == n - start && memcmp(h->token, token + start, n - start) == 0;
}

int lease__http_new(lease_http **out, const char *token, char *err, size_t errlen)
{
	lease_http *h = NULL;
	int rc;

	*out = NULL;
	if ((rc = lease__http_global_init(err, errlen)) < 0)
		return rc;
	if (!(h = calloc(1, sizeof(*h))))
		return LEASE_ENOMEM;
	h->cap = LEASE_HTTP_BODY_CAP;
	if ((rc = set_token(h, token, err, errlen)) < 0) {
		lease__http_free(h);
		return rc;
	}
	if (!(h->curl = cu.easy_init())) {
		lease__error_set(err, errlen, "%s", "libcurl could not create a handle");
		lease__http_free(h);
		return LEASE_ECONFIG;
	}

	cu.easy_setopt(h->curl, CURLOPT_USERAGENT, "reflease/" REFLEASE_VERSION);
	cu.easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(h->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	cu.easy_setopt(h->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	cu.easy_setopt(h->curl, CURLOPT_FOLLOWLOCATION, 0L);
	cu.easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	cu.easy_setopt(h->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	cu.easy_setopt(h->curl, CURLOPT_VERBOSE, 0L);
	cu.easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->errbuf);
	cu.easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body);
	cu.easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
	cu.easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
	cu.easy_setopt(h->curl, CURLOPT_HEADERDATA, h);
	cu.easy_setopt(h->curl, CURLOPT_ACCEPT_ENCODING, "");
	*out = h;
	return 0;
}

void lease__http_set_body_cap(lease_http *h, size_t cap)
{
	h->cap = cap ? cap : LEASE_HTTP_BODY_CAP;
}

unsigned long lease__http_request_count(const lease_http *h)
{
	return h->requests;
}

void lease__http_set_responder(lease_http *h, lease_http_responder fn, void *payload)
{
	h->responder = fn;
	h->responder_payload = payload;
}

/* Feed one raw answer through the same callbacks libcurl drives. */
static void feed_raw(lease_http *h, lease_http_response *resp, const char *raw, size_t len,
                     long *status)
{
	size_t i = 0, eol, body_at = len;
	int first = 1;

	*status = 0;
	while (i < len) {
		const char *nl = memchr(raw + i, '\n', len - i);

		eol = nl ? (size_t)(nl - raw) + 1 : len;
		if (eol - i <= 2 && (raw[i] == '\r' || raw[i] == '\n')) {
			body_at = eol; /* the blank line ends the headers */
			break;
		}
		if (first && eol - i > 9 && strncmp(raw + i, "HTTP/", 5) == 0) {
			const char *sp = memchr(raw + i, ' ', eol - i);
			if (sp && (size_t)(sp - raw) + 4 <= eol) {
				char code[4];
				memcpy(code, sp + 1, 3);
				code[3] = '\0';
				*status = strtol(code, NULL, 10);
			}
		}
		first = 0;
		on_header((char *)(raw + i), 1, eol - i, h);
		i = eol;
	}
	/* the body in chunks, as the network would deliver it */
	for (i = body_at; i < len && !resp->body_overflow;) {
		size_t n = len - i < 16384 ? len - i : 16384;
		if (on_body((char *)(raw + i), 1, n, h) != n)
			break;
		i += n;
	}
}

int lease__http_parse_response(lease_http *h, lease_http_response *resp, const char *raw,
                               size_t len)
{
	long status;

	memset(resp, 0, sizeof(*resp));
	reset_headers(resp);
	h->cur = resp;
	h->body_alloc = 0;
	feed_raw(h, resp, raw, len, &status);
	h->cur = NULL;
	resp->date_mono_ms = lease__env_mono_ms(&h->clock);
	if (resp->body_overflow || status < 100 || status > 599) {
		resp->result = LEASE_HTTP_UNANSWERED;
		resp->status = 0;
		snprintf(resp->error, sizeof(resp->error), "%s",
		         resp->body_overflow ? "response body larger than the cap"
		                             : "malformed HTTP status line");
		free(resp->body);
		resp->body = NULL;
		resp->body_len = 0;
	} else {
		resp->result = LEASE_HTTP_OK;
		resp->status = status;
	}
	return 0;
}

static lease_http_result classify_curl(CURLcode cc, long request_size)
{
	switch (cc) {
	case CURLE_OK: return LEASE_HTTP_OK;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH: return LEASE_HTTP_NOT_SENT;
	default: return request_size > 0 ? LEASE_HTTP_UNANSWERED : LEASE_HTTP_NOT_SENT;
	}
}

void lease__http_set_if_none_match(lease_http *h, const char *etag)
{
	size_t i, n = etag ? strlen(etag) : 0;

	h->if_none_match[0] = '\0';
	if (n == 0 || n >= sizeof(h->if_none_match))
		return;
	for (i = 0; i < n; i++)
		if (etag[i] <= ' ' || etag[i] > '~') /* no header injection from a server's value */
			return;
	memcpy(h->if_none_match, etag, n + 1);
}

/* The GET header list plus "If-None-Match: <etag>" (a copy: the shared list
 * stays as it is); NULL when out of memory. */
static struct curl_slist *conditional_headers(const lease_http *h, const char *etag)
{
	struct curl_slist *l = NULL, *it;
	char line[160];
	int ok = 1;

	for (it = h->headers; it; it = it->next)
		l = add_header(l, it->data, &ok);
	snprintf(line, sizeof(line), "If-None-Match: %s", etag);
	l = add_header(l, line, &ok);
	if (!ok) {
		if (l)
			wipe(l->data, strlen(l->data));
		cu.slist_free_all(l);
		return NULL;
	}
	return l;
}

int lease__http_request(lease_http *h, lease_http_response *resp, const char *method,
                        const char *url, const char *body, long timeout_ms)
{
	char err[256];
	CURLcode cc;
	long status = 0, reqsize = 0;
	int kind;
	struct curl_slist *cond = NULL;
	char inm[sizeof(h->if_none_match)];

	memcpy(inm, h->if_none_match, sizeof(inm)); /* for this request only */
	h->if_none_match[0] = '\0';
	memset(resp, 0, sizeof(*resp));
	reset_headers(resp);
	if ((kind = classify_url(url, err, sizeof(err))) < 0) {
		snprintf(resp->error, sizeof(resp->error), "%s", err);
		return kind;
	}
	if (h->responder) {
		const char *raw = NULL;
		size_t raw_len = 0;
		int r;

		h->requests++;
		r = h->responder(h->responder_payload, method, url, body, &raw, &raw_len);
		if (r == 0) {
			lease__http_parse_response(h, resp, raw, raw_len);
			if (resp->body_overflow)
				snprintf(resp->error, sizeof(resp->error),
				         "response body larger than %zu bytes", h->cap);
			return 0;
		}
		resp->result = r == 1 ? LEASE_HTTP_NOT_SENT : LEASE_HTTP_UNANSWERED;
		snprintf(resp->error, sizeof(resp->error), "%s",
		         r == 1 ? "no connection (test responder)" : "no answer (test responder)");
		resp->date_mono_ms = lease__env_mono_ms(&h->clock);
		return 0;
	}
	h->cur = resp;
	h->body_alloc = 0;
	h->errbuf[0] = '\0';
	cu.easy_setopt(h->curl, CURLOPT_URL, url);
	/* Plain http goes to loopback only, never through a proxy (it would see
	 * the credential). */
	cu.easy_setopt(h->curl, CURLOPT_NOPROXY, kind == 1 ? "*" : NULL);
	if (!body && inm[0] && strcmp(method, "GET") == 0)
		cond = conditional_headers(h, inm);
	cu.easy_setopt(h->curl, CURLOPT_HTTPHEADER,
	               body   ? h->json_headers
	               : cond ? cond
	                      : h->headers);
	cu.easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 30000L);
	cu.easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS,
	               timeout_ms > 0 && timeout_ms < 10000 ? timeout_ms : 10000L);
	if (strcmp(method, "GET") == 0) {
		cu.easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, NULL);
		cu.easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
	} else {
		cu.easy_setopt(h->curl, CURLOPT_POST, 1L);
		cu.easy_setopt(h->curl, CURLOPT_POSTFIELDS, body ? body : "");
		cu.easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE, (long)(body ? strlen(body) : 0));
		cu.easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST,
		               strcmp(method, "POST") == 0 ? NULL : method);
	}
	h->requests++;
	cc = cu.easy_perform(h->curl);
	h->cur = NULL;
	if (cond) { /* holds a copy of the credential: wipe before freeing */
		wipe(cond->data, strlen(cond->data));
		cu.slist_free_all(cond);
	}
	resp->date_mono_ms = lease__env_mono_ms(&h->clock);
	cu.easy_getinfo(h->curl, CURLINFO_REQUEST_SIZE, &reqsize);
	cu.easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	resp->result = classify_curl(cc, reqsize);
	/* A certificate that does not verify is a configuration error, not a
	 * network blip (issue 24 item 1): the caller reports it at once. */
	resp->tls_failed = cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE ||
	                   cc == CURLE_SSL_CERTPROBLEM || cc == CURLE_SSL_ISSUER_ERROR ||
	                   cc == CURLE_SSL_CRL_BADFILE || cc == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
	if (cc != CURLE_OK) {
		long connect_code = 0;
		cu.easy_getinfo(h->curl, CURLINFO_HTTP_CONNECTCODE, &connect_code);
		/* the proxy refused the tunnel: for credentials (407) or by its
		 * rules (403) — configuration; a 5xx of the proxy stays temporary */
		if (connect_code == 407 || connect_code == 403) {
			resp->proxy_auth = (int)connect_code;
			resp->result = LEASE_HTTP_NOT_SENT;
		}
	}
	if (resp->body_overflow)
		resp->result = LEASE_HTTP_UNANSWERED;
	if (resp->result == LEASE_HTTP_OK) {
		resp->status = status;
	} else {
		resp->status = 0;
		if (resp->body_overflow)
			snprintf(resp->error, sizeof(resp->error),
			         "response body larger than %zu bytes", h->cap);
		else
			snprintf(resp->error, sizeof(resp->error), "%s",
			         h->errbuf[0] ? h->errbuf : cu.easy_strerror(cc));
		free(resp->body);
		resp->body = NULL;
		resp->body_len = 0;
	}
	return 0;
}

void lease__http_response_clear(lease_http_response *r)
{
	if (!r)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
}

void lease__http_free(lease_http *h)
{
	if (!h)
		return;
	if (h->curl)
		cu.easy_cleanup(h->curl);
	drop_headers(h); /* they hold a copy of the credential: wiped first */
	free(h);
}
