/* A fake GitHub API server (see fakegh.h): libmicrohttpd on 127.0.0.1, a real
 * bare repository through libgit2, GitHub's statuses, messages and headers,
 * fault injection, a request log. Test support: it prints its own failures. */
#define _DEFAULT_SOURCE
#include "fakegh.h"
#include "util/util.h"

#include <dirent.h>
#include <git2.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FAULTS 32
#define MAX_LAGS   256
#define LOG_MAX    20000
#define BODY_MAX   (4 * 1024 * 1024)
#define DOCS       "https://docs.github.com/rest/git/refs"
#define REPO_ID    "R_kgDOfakegh01"
#define ZERO_HEX   "0000000000000000000000000000000000000000"
#define REPO_NUM   "4242" /* /repositories/<id>/, where a moved repository redirects */

struct fault {
	fakegh_endpoint ep;
	fakegh_fault_kind kind;
	int count;
	int arg;
};

/* The value a ref had before its latest write (read lag). */
struct lag {
	char ref[256];
	int had_old;
	git_oid old;
	int64_t at_ms;
};

struct fakegh {
	struct MHD_Daemon *d;
	pthread_mutex_t mu;
	int64_t (*clock_ms)(void *payload); /* the fake's clock (options), or NULL */
	void *clock_payload;
	git_repository *repo;
	git_oid empty_tree;
	char path[1024];
	int temp;
	char url[64];
	unsigned short port;
	char owner[64], name[128];
	char *token;
	int64_t offset;
	int gql_blind;
	fakegh_gql_view gql_view;
	int moved;          /* REST under /repos/O/R/ redirects (fakegh_set_moved) */
	char moved_to[256]; /* Location base */
	int64_t *log_ms;    /* arrival time of each log line's request */
	int page_size;
	int no_update_refs;
	int ignore_before_forced; /* fakegh_options.ignore_before_oid_when_forced */
	int lag_ms;
	struct fault faults[MAX_FAULTS];
	int nfaults;
	struct lag lags[MAX_LAGS];
	int nlags;
	unsigned counts[FAKEGH_N_ENDPOINTS];
	unsigned counted;      /* requests GitHub counts against the primary rate limit */
	unsigned not_modified; /* authorised 304s: not counted */
	char **log;
	size_t nlog;
	long rl_used;
	long rl_limit;        /* x-ratelimit-limit (0 = 5000); set by /_fakegh/ratelimit */
	char rl_resource[16]; /* the budget rl_limit is for ("" = every one) */
};

/* Per-request state across libmicrohttpd's calls. */
struct req {
	char *body;
	size_t len;
	int too_big;
};

/* One answer. */
struct answer {
	unsigned status;
	char *body;         /* owned */
	int drop;           /* close without answering */
	long retry_after;   /* -1 none */
	int rl_zero;        /* x-ratelimit-remaining: 0 */
	long rl_reset_in;   /* seconds from now for x-ratelimit-reset when rl_zero */
	int no_rl_headers;  /* omit x-ratelimit-* */
	char link[600];     /* Link header, or "" */
	char location[600]; /* Location header, or "" */
	const char *resource;
	int html; /* applied, then answered 200 with a proxy's HTML page */
};

static const char *const ep_names[FAKEGH_N_ENDPOINTS] = {
        "any",    "commit-post", "commit-get", "ref-get",    "create", "patch",
        "delete", "matching",    "graphql",    "updateRefs", "other",
};

const char *fakegh_endpoint_name(fakegh_endpoint ep)
{
	return ep >= 0 && ep < FAKEGH_N_ENDPOINTS ? ep_names[ep] : "?";
}

int fakegh_endpoint_parse(const char *name)
{
	int i;

	for (i = 0; i < FAKEGH_N_ENDPOINTS; i++)
		if (strcmp(name, ep_names[i]) == 0)
			return i;
	return -1;
}

int fakegh_fault_parse(const char *name)
{
	static const struct {
		const char *n;
		fakegh_fault_kind k;
	} t[] = {
	        {"5xx", FAKEGH_FAULT_5XX},
	        {"drop", FAKEGH_FAULT_DROP},
	        {"403-retry", FAKEGH_FAULT_403_RETRY},
	        {"403-reset", FAKEGH_FAULT_403_RESET},
	        {"403-nohdr", FAKEGH_FAULT_403_NOHDR},
	        {"429-retry", FAKEGH_FAULT_429_RETRY},
	        {"429-nohdr", FAKEGH_FAULT_429_NOHDR},
	        {"gql-rate-limited", FAKEGH_FAULT_GQL_RATE_LIMITED},
	        {"422-rules", FAKEGH_FAULT_422_RULES},
	        {"401", FAKEGH_FAULT_401},
	        {"403-forbidden", FAKEGH_FAULT_403_FORBIDDEN},
	        {"409-empty", FAKEGH_FAULT_409_EMPTY},
	        {"no-updaterefs", FAKEGH_FAULT_NO_UPDATEREFS},
	        {"stall", FAKEGH_FAULT_STALL},
	        {"gql-internal", FAKEGH_FAULT_GQL_INTERNAL},
	        {"gql-rate-limit", FAKEGH_FAULT_GQL_RATE_LIMIT},
	        {"gql-403-rate-limit", FAKEGH_FAULT_GQL_403_RATE_LIMIT},
	        {"gql-untyped-rate-limit", FAKEGH_FAULT_GQL_UNTYPED_RATE_LIMIT},
	        {"422-update-failed", FAKEGH_FAULT_422_UPDATE_FAILED},
	        {"html-200", FAKEGH_FAULT_HTML_200},
	        {"407", FAKEGH_FAULT_407},
	        {"403-abuse", FAKEGH_FAULT_403_ABUSE},
	        {"gql-refused", FAKEGH_FAULT_GQL_REFUSED},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(name, t[i].n) == 0)
			return (int)t[i].k;
	return -1;
}

/* The fake's clock, ms: the options' clock_ms (a test's virtual time), else
 * CLOCK_MONOTONIC. */
static int64_t mono_ms(const fakegh *f)
{
	struct timespec ts;

	if (f->clock_ms)
		return f->clock_ms(f->clock_payload);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t server_time(const fakegh *f)
{
	return (int64_t)time(NULL) + f->offset;
}

static void iso8601(char out[32], int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int64_t parse_iso8601(const char *s)
{
	int y, mo, d, h, mi, sec;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6)
		return -1;
	return lease__days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
}

/* ---- answers --------------------------------------------------------------- */

static void answer_json(struct answer *a, unsigned status, json_t *j)
{
	a->status = status;
	a->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
}

static void answer_msg(struct answer *a, unsigned status, const char *message)
{
	answer_json(a, status,
	            json_pack("{s:s, s:s, s:s}", "message", message, "documentation_url", DOCS,
	                      "status",
	                      status == 401   ? "401"
	                      : status == 403 ? "403"
	                      : status == 404 ? "404"
	                      : status == 409 ? "409"
	                      : status == 422 ? "422"
	                      : status == 429 ? "429"
	                                      : "500"));
}

static void answer_gql_error(struct answer *a, const char *type, const char *path,
                             const char *message)
{
	json_t *err = json_pack("{s:s, s:s}", "type", type, "message", message);

	if (path)
		json_object_set_new(err, "path", json_pack("[s]", path));
	json_object_set_new(err, "locations", json_pack("[{s:i, s:i}]", "line", 1, "column", 1));
	if (path && strcmp(path, "updateRefs") == 0)
		answer_json(a, 200,
		            json_pack("{s:{s:n}, s:[o]}", "data", "updateRefs", "errors", err));
	else
		answer_json(a, 200, json_pack("{s:[o]}", "errors", err));
}

/* ---- repository helpers ------------------------------------------------------ */

static void hex_of(char out[41], const git_oid *oid)
{
	git_oid_tostr(out, 41, oid);
}

static int lookup_ref(fakegh *f, const char *refname, git_oid *out)
{
	return git_reference_name_to_id(out, f->repo, refname) == 0;
}

static struct lag *find_lag(fakegh *f, const char *refname)
{
	int i;

	for (i = 0; i < f->nlags; i++)
		if (strcmp(f->lags[i].ref, refname) == 0)
			return &f->lags[i];
	return NULL;
}

/* Remember a ref's value before a write, for read lag. */
static void note_write(fakegh *f, const char *refname, int had_old, const git_oid *old)
{
	struct lag *l = find_lag(f, refname);

	if (f->lag_ms <= 0)
		return;
	if (l && mono_ms(f) - l->at_ms < f->lag_ms) {
		/* still lagging: readers keep seeing the older value */
		l->at_ms = mono_ms(f);
		return;
	}
	if (!l) {
		if (f->nlags == MAX_LAGS)
			f->nlags = 0;
		l = &f->lags[f->nlags++];
	}
	snprintf(l->ref, sizeof(l->ref), "%s", refname);
	l->had_old = had_old;
	if (had_old)
		l->old = *old;
	l->at_ms = mono_ms(f);
}

/* What a (lagging) reader sees of @p refname: 1 present with *out, 0 absent. */
static int read_ref_lagged(fakegh *f, const char *refname, git_oid *out)
{
	struct lag *l = find_lag(f, refname);

	if (l && f->lag_ms > 0 && mono_ms(f) - l->at_ms < f->lag_ms) {
		if (l->had_old)
			*out = l->old;
		return l->had_old;
	}
	return lookup_ref(f, refname, out);
}

static int repo_is_empty(fakegh *f)
{
	git_reference_iterator *it = NULL;
	git_reference *r = NULL;
	int empty = 1;

	if (git_reference_iterator_new(&it, f->repo) < 0)
		return 0;
	if (git_reference_next(&r, it) == 0) {
		empty = 0;
		git_reference_free(r);
	}
	git_reference_iterator_free(it);
	return empty;
}

static json_t *user_json(const git_signature *s)
{
	char date[32];

	iso8601(date, (int64_t)s->when.time);
	return json_pack("{s:s, s:s, s:s}", "name", s->name, "email", s->email, "date", date);
}

static json_t *rest_commit_json(fakegh *f, git_commit *c)
{
	char hex[41], tree[41], url[512];
	json_t *parents = json_array(), *j;
	unsigned i;

	hex_of(hex, git_commit_id(c));
	hex_of(tree, git_commit_tree_id(c));
	for (i = 0; i < git_commit_parentcount(c); i++) {
		char p[41];
		hex_of(p, git_commit_parent_id(c, i));
		snprintf(url, sizeof(url), "%s/repos/%s/%s/git/commits/%s", f->url, f->owner,
		         f->name, p);
		json_array_append_new(parents, json_pack("{s:s, s:s}", "sha", p, "url", url));
	}
	snprintf(url, sizeof(url), "%s/repos/%s/%s/git/commits/%s", f->url, f->owner, f->name, hex);
	j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:s}, s:s, s:o, s:{s:b, s:s, s:n, s:n}}", "sha",
	              hex, "node_id", "C_fake", "url", url, "author",
	              user_json(git_commit_author(c)), "committer",
	              user_json(git_commit_committer(c)), "tree", "sha", tree, "message",
	              git_commit_message_raw(c), "parents", parents, "verification", "verified", 0,
	              "reason", "unsigned", "signature", "payload");
	return j;
}

static const char *type_name(git_object_t t)
{
	switch (t) {
	case GIT_OBJECT_COMMIT: return "commit";
	case GIT_OBJECT_TREE: return "tree";
	case GIT_OBJECT_BLOB: return "blob";
	case GIT_OBJECT_TAG: return "tag";
	default: return "unknown";
	}
}

static json_t *rest_ref_json(fakegh *f, const char *refname, const git_oid *oid)
{
	git_object *o = NULL;
	char hex[41], url[512];
	const char *ty = "commit";
	json_t *j;

	hex_of(hex, oid);
	if (git_object_lookup(&o, f->repo, oid, GIT_OBJECT_ANY) == 0)
		ty = type_name(git_object_type(o));
	git_object_free(o);
	snprintf(url, sizeof(url), "%s/repos/%s/%s/git/%s", f->url, f->owner, f->name, refname);
	j = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "ref", refname, "node_id", "REF_fake",
	              "url", url, "object", "sha", hex, "type", ty, "url", url);
	return j;
}

/* GraphQL GitObject for @p oid (depth: parent levels to include), or null. */
static json_t *gql_object(fakegh *f, const git_oid *oid, int depth)
{
	git_object *o = NULL;
	char hex[41], date[32];
	json_t *j, *nodes;
	git_commit *c;
	unsigned i;

	if (git_object_lookup(&o, f->repo, oid, GIT_OBJECT_ANY) < 0)
		return json_null();
	hex_of(hex, oid);
	if (git_object_type(o) != GIT_OBJECT_COMMIT) {
		const char *tn = git_object_type(o) == GIT_OBJECT_BLOB   ? "Blob"
		                 : git_object_type(o) == GIT_OBJECT_TREE ? "Tree"
		                                                         : "Tag";
		git_object_free(o);
		return json_pack("{s:s, s:s}", "__typename", tn, "oid", hex);
	}
	c = (git_commit *)o;
	iso8601(date, (int64_t)git_commit_time(c));
	nodes = json_array();
	for (i = 0; i < git_commit_parentcount(c) && i < 1; i++) {
		if (depth > 0) {
			json_array_append_new(nodes,
			                      gql_object(f, git_commit_parent_id(c, i), depth - 1));
		} else {
			char p[41];
			hex_of(p, git_commit_parent_id(c, i));
			json_array_append_new(nodes, json_pack("{s:s}", "oid", p));
		}
	}
	j = json_pack("{s:s, s:s, s:s, s:s, s:{s:o}}", "__typename", "Commit", "oid", hex,
	              "message", git_commit_message_raw(c), "committedDate", date, "parents",
	              "nodes", nodes);
	git_object_free(o);
	return j;
}

/* ---- REST handlers ------------------------------------------------------------- */

/* A commit's author or committer from the request's JSON @p who (name and
 * email, "fake" and "fake@localhost" when absent) at @p when. */
static int signature_of(git_signature **out, json_t *who, int64_t when)
{
	const char *name = json_string_value(json_object_get(who, "name"));
	const char *email = json_string_value(json_object_get(who, "email"));

	return git_signature_new(out, name ? name : "fake", email ? email : "fake@localhost",
	                         (git_time_t)when, 0);
}

static void h_commit_post(fakegh *f, struct answer *a, json_t *body)
{
	const char *msg = json_string_value(json_object_get(body, "message"));
	const char *tree_hex = json_string_value(json_object_get(body, "tree"));
	json_t *parents = json_object_get(body, "parents"), *au, *co;
	git_commit *pc[8] = {NULL};
	git_signature *author = NULL, *committer = NULL;
	git_tree *tree = NULL;
	git_commit *c = NULL;
	git_oid oid, toid;
	size_t i, np = json_array_size(parents);
	int64_t at, ct;

	if (!msg || !tree_hex || np > 8 || git_oid_fromstr(&toid, tree_hex) < 0) {
		answer_msg(a, 422,
		           "Invalid request.\n\nFor 'properties/tree', nil is not a string.");
		return;
	}
	if (git_tree_lookup(&tree, f->repo, &toid) < 0) {
		answer_msg(a, 422, "Tree SHA does not exist");
		return;
	}
	for (i = 0; i < np; i++) {
		git_oid p;
		const char *ph = json_string_value(json_array_get(parents, i));
		if (!ph || git_oid_fromstr(&p, ph) < 0 ||
		    git_commit_lookup(&pc[i], f->repo, &p) < 0) {
			answer_msg(a, 422, "Parent SHA does not exist or is not a commit object");
			goto out;
		}
	}
	au = json_object_get(body, "author");
	co = json_object_get(body, "committer");
	at = parse_iso8601(json_string_value(json_object_get(au, "date")));
	ct = parse_iso8601(json_string_value(json_object_get(co, "date")));
	if (at < 0)
		at = server_time(f);
	if (ct < 0)
		ct = at;
	if (signature_of(&author, au, at) < 0 || signature_of(&committer, co, ct) < 0 ||
	    git_commit_create(&oid, f->repo, NULL, author, committer, NULL, msg, tree, np,
	                      (const git_commit **)pc) < 0 ||
	    git_commit_lookup(&c, f->repo, &oid) < 0) {
		answer_msg(a, 500, "Server Error");
		goto out;
	}
	answer_json(a, 201, rest_commit_json(f, c));
out:
	git_commit_free(c);
	git_signature_free(author);
	git_signature_free(committer);
	for (i = 0; i < 8; i++)
		git_commit_free(pc[i]);
	git_tree_free(tree);
}

static void h_commit_get(fakegh *f, struct answer *a, const char *sha)
{
	git_commit *c = NULL;
	git_oid oid;

	if (git_oid_fromstr(&oid, sha) < 0 || git_commit_lookup(&c, f->repo, &oid) < 0) {
		answer_msg(a, 404, "Not Found");
		return;
	}
	answer_json(a, 200, rest_commit_json(f, c));
	git_commit_free(c);
}

static int valid_refname(const char *r)
{
	return strncmp(r, "refs/", 5) == 0 && strchr(r + 5, '/') && git_reference_is_valid_name(r);
}

static void h_ref_create(fakegh *f, struct answer *a, json_t *body)
{
	const char *ref = json_string_value(json_object_get(body, "ref"));
	const char *sha = json_string_value(json_object_get(body, "sha"));
	git_reference *r = NULL;
	git_object *o = NULL;
	git_oid oid, cur;
	int rc;

	if (!ref || !sha || git_oid_fromstr(&oid, sha) < 0) {
		answer_msg(a, 422, "Invalid request.\n\n\"sha\" wasn't supplied.");
		return;
	}
	if (!valid_refname(ref)) {
		answer_msg(a, 422,
		           "Reference name must contain at least three slash-separated "
		           "components.");
		return;
	}
	if (git_object_lookup(&o, f->repo, &oid, GIT_OBJECT_ANY) < 0) {
		answer_msg(a, 422, "Object does not exist");
		return;
	}
	git_object_free(o);
	if (lookup_ref(f, ref, &cur)) {
		answer_msg(a, 422, "Reference already exists");
		return;
	}
	rc = git_reference_create(&r, f->repo, ref, &oid, 0, "fakegh: create");
	if (rc == GIT_EEXISTS) {
		answer_msg(a, 422, "Reference already exists");
		return;
	}
	if (rc < 0) {
		answer_msg(a, 422, "Reference update failed");
		return;
	}
	git_reference_free(r);
	note_write(f, ref, 0, NULL);
	answer_json(a, 201, rest_ref_json(f, ref, &oid));
}

static void h_ref_patch(fakegh *f, struct answer *a, const char *refname, json_t *body)
{
	const char *sha = json_string_value(json_object_get(body, "sha"));
	int force = json_is_true(json_object_get(body, "force"));
	git_reference *r = NULL;
	git_oid oid, cur, base;

	if (!sha || git_oid_fromstr(&oid, sha) < 0) {
		answer_msg(a, 422, "Invalid request.\n\n\"sha\" wasn't supplied.");
		return;
	}
	if (!lookup_ref(f, refname, &cur)) {
		answer_msg(a, 422, "Reference does not exist");
		return;
	}
	if (git_oid_equal(&cur, &oid)) { /* GitHub: same-SHA PATCH is a 200 no-op */
		answer_json(a, 200, rest_ref_json(f, refname, &oid));
		return;
	}
	if (!force &&
	    (git_merge_base(&base, f->repo, &cur, &oid) < 0 || !git_oid_equal(&base, &cur))) {
		answer_msg(a, 422, "Update is not a fast forward");
		return;
	}
	if (git_reference_create(&r, f->repo, refname, &oid, 1, "fakegh: patch") < 0) {
		answer_msg(a, 422, "Reference update failed");
		return;
	}
	git_reference_free(r);
	note_write(f, refname, 1, &cur);
	answer_json(a, 200, rest_ref_json(f, refname, &oid));
}

static void h_ref_delete(fakegh *f, struct answer *a, const char *refname)
{
	git_oid cur;

	if (!lookup_ref(f, refname, &cur) || git_reference_remove(f->repo, refname) < 0) {
		answer_msg(a, 422, "Reference does not exist");
		return;
	}
	note_write(f, refname, 1, &cur);
	a->status = 204;
}

static void h_ref_get(fakegh *f, struct answer *a, const char *refname)
{
	git_oid oid;

	if (!read_ref_lagged(f, refname, &oid)) {
		answer_msg(a, 404, "Not Found");
		return;
	}
	answer_json(a, 200, rest_ref_json(f, refname, &oid));
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void h_matching(fakegh *f, struct answer *a, const char *prefix, const char *rest, int page)
{
	git_reference_iterator *it = NULL;
	git_reference *r = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	json_t *arr = json_array();
	int k;

	if (git_reference_iterator_new(&it, f->repo) == 0) {
		while (git_reference_next(&r, it) == 0) {
			const char *nm = git_reference_name(r);
			if (strncmp(nm, prefix, strlen(prefix)) == 0 &&
			    git_reference_type(r) == GIT_REFERENCE_DIRECT) {
				if (n == cap) {
					cap = cap ? cap * 2 : 64;
					names = realloc(names, cap * sizeof(*names));
				}
				names[n++] = strdup(nm);
			}
			git_reference_free(r);
		}
		git_reference_iterator_free(it);
	}
	/* Lagging readers: refs deleted recently still listed. */
	for (k = 0; k < f->nlags; k++) {
		git_oid tmp;
		struct lag *l = &f->lags[k];
		if (mono_ms(f) - l->at_ms >= f->lag_ms || !l->had_old ||
		    strncmp(l->ref, prefix, strlen(prefix)) != 0 || lookup_ref(f, l->ref, &tmp))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
		}
		names[n++] = strdup(l->ref);
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		git_oid oid;
		size_t ps = f->page_size > 0 ? (size_t)f->page_size : 0;
		int on_page = !ps || (i >= (size_t)(page - 1) * ps && i < (size_t)page * ps);
		if (on_page && read_ref_lagged(f, names[i], &oid))
			json_array_append_new(arr, rest_ref_json(f, names[i], &oid));
		free(names[i]);
	}
	if (f->page_size > 0 && (size_t)page * (size_t)f->page_size < n)
		snprintf(a->link, sizeof(a->link),
		         "<%s/repos/%s/%s/%s?page=%d>; rel=\"next\", <%s/repos/%s/%s/%s?page=1>; "
		         "rel=\"first\"",
		         f->url, f->owner, f->name, rest, page + 1, f->url, f->owner, f->name,
		         rest);
	free(names);
	answer_json(a, 200, arr);
}

/* ---- GraphQL ------------------------------------------------------------------- */

/* The name of a GraphQL argument's value at @p v: "$var" looked up in
 * @p vars, or a "literal"; "" when neither. */
static void gql_arg(char *out, size_t len, const char *v, json_t *vars)
{
	out[0] = '\0';
	if (*v == '$') {
		size_t m = strspn(v + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"
		                         "123456789_");
		char var[64];
		const char *val;
		if (m >= sizeof(var))
			return;
		memcpy(var, v + 1, m);
		var[m] = '\0';
		val = json_string_value(json_object_get(vars, var));
		snprintf(out, len, "%s", val ? val : "");
	} else if (*v == '"') {
		size_t m = strcspn(v + 1, "\"");
		if (m < len) {
			memcpy(out, v + 1, m);
			out[m] = '\0';
		}
	}
}

/* The alias written before the ':' at @p colon in the query @p q
 * ("r0:ref(...)": "r0") into @p out; 0 when there is none that fits. */
static int gql_alias(char *out, size_t len, const char *q, const char *colon)
{
	const char *s = colon;
	size_t n;

	while (s > q && (s[-1] == '_' || (s[-1] >= '0' && s[-1] <= '9') ||
	                 (s[-1] >= 'a' && s[-1] <= 'z') || (s[-1] >= 'A' && s[-1] <= 'Z')))
		s--;
	n = (size_t)(colon - s);
	if (n == 0 || n >= len)
		return 0;
	memcpy(out, s, n);
	out[n] = '\0';
	return 1;
}

/* Aliased object(oid:) look-ups: "alias:object(oid:$var)" or (oid:"hex"). */
static void gql_objects(fakegh *f, const char *q, json_t *vars, json_t *repo)
{
	const char *p = q;

	while ((p = strstr(p, ":object(oid:"))) {
		const char *v = p + strlen(":object(oid:");
		char alias[64], hex[64];
		git_oid oid;
		int named = gql_alias(alias, sizeof(alias), q, p);

		p = v;
		if (!named)
			continue;
		gql_arg(hex, sizeof(hex), v, vars);
		if (strlen(hex) != 40 || git_oid_fromstr(&oid, hex) < 0)
			json_object_set_new(repo, alias, json_null());
		else
			json_object_set_new(repo, alias, gql_object(f, &oid, 1));
	}
}

/* Every ref(qualifiedName:) of the query, aliased ("r0:ref(qualifiedName:$r0)",
 * a set's batched read: one key per alias) or not ("ref"): the Ref with its
 * target, or null for a ref that does not exist — GitHub's schema types
 * Repository.ref as a nullable Ref, "Fetch a given ref from the repository"
 * (docs.github.com/en/graphql/reference/objects#repository; octokit/
 * graphql-schema schema.graphql `ref(qualifiedName: String!): Ref`), and an
 * aliased field answers under its alias (GraphQL spec, "Field Alias"), the
 * missing one as `"r1": null` beside the others without an error. */
static void gql_refs(fakegh *f, const char *q, json_t *vars, json_t *repo)
{
	const char *p = q;

	while ((p = strstr(p, "ref(qualifiedName:"))) {
		char key[64] = "ref", ref[512], shown[528];
		int ordinary;
		git_oid oid;

		if (p > q && p[-1] == ':' && !gql_alias(key, sizeof(key), q, p - 1)) {
			p += 4;
			continue;
		}
		p += strlen("ref(qualifiedName:");
		gql_arg(ref, sizeof(ref), p, vars);
		ordinary =
		        strncmp(ref, "refs/heads/", 11) == 0 || strncmp(ref, "refs/tags/", 10) == 0;
		/* GraphQL's view of refs outside heads/ and tags/ is undocumented
		 * (issue 15 #3): each fakegh_gql_view is one possible answer. */
		snprintf(shown, sizeof(shown), "%s", ref);
		if (*ref && !ordinary && f->gql_view == FAKEGH_GQL_ELSEWHERE)
			snprintf(shown, sizeof(shown), "refs/heads/%s",
			         strrchr(ref, '/') ? strrchr(ref, '/') + 1 : ref);
		if (*ref &&
		    (ordinary || (!f->gql_blind && (f->gql_view == FAKEGH_GQL_SEES ||
		                                    f->gql_view == FAKEGH_GQL_ELSEWHERE))) &&
		    read_ref_lagged(f, shown, &oid)) {
			const char *short_name = strrchr(shown, '/') + 1;
			json_object_set_new(repo, key,
			                    json_pack("{s:s#, s:s, s:o}", "prefix", shown,
			                              (int)(short_name - shown), "name", short_name,
			                              "target", gql_object(f, &oid, 0)));
		} else {
			json_object_set_new(repo, key, json_null());
		}
	}
}

static void gql_query(fakegh *f, struct answer *a, const char *q, json_t *vars)
{
	const char *owner = json_string_value(json_object_get(vars, "owner"));
	const char *name = json_string_value(json_object_get(vars, "name"));
	json_t *repo;
	char msg[300];

	if (!strstr(q, "repository(")) {
		answer_gql_error(a, "INTERNAL", NULL, "fakegh: unsupported query");
		return;
	}
	if (!owner || !name || strcmp(owner, f->owner) != 0 || strcmp(name, f->name) != 0) {
		snprintf(msg, sizeof(msg),
		         "Could not resolve to a Repository with the name '%s/%s'.",
		         owner ? owner : "", name ? name : "");
		answer_json(a, 200,
		            json_pack("{s:{s:n}, s:[{s:s, s:[s], s:s}]}", "data", "repository",
		                      "errors", "type", "NOT_FOUND", "path", "repository",
		                      "message", msg));
		return;
	}
	repo = json_pack("{s:s}", "id", REPO_ID);
	gql_refs(f, q, vars, repo);
	if (strstr(q, "refs(refPrefix:")) {
		/* nsrefs:refs(refPrefix:$ns,first:1){totalCount} */
		const char *ns = json_string_value(json_object_get(vars, "ns"));
		git_reference_iterator *it = NULL;
		git_reference *r = NULL;
		json_int_t n = 0;
		if (ns &&
		    ((!f->gql_blind && f->gql_view != FAKEGH_GQL_ELSEWHERE) ||
		     strncmp(ns, "refs/heads/", 11) == 0 || strncmp(ns, "refs/tags/", 10) == 0) &&
		    git_reference_iterator_new(&it, f->repo) == 0) {
			while (git_reference_next(&r, it) == 0) {
				n += strncmp(git_reference_name(r), ns, strlen(ns)) == 0;
				git_reference_free(r);
			}
			git_reference_iterator_free(it);
		}
		json_object_set_new(repo, "nsrefs", json_pack("{s:I}", "totalCount", n));
	}
	gql_objects(f, q, vars, repo);
	if (strstr(q, "__type(name:\"UpdateRefsInput\")"))
		answer_json(a, 200,
		            json_pack("{s:{s:o, s:o}}", "data", "repository", repo, "ur",
		                      f->no_update_refs
		                              ? json_null()
		                              : json_pack("{s:s}", "name", "UpdateRefsInput")));
	else
		answer_json(a, 200, json_pack("{s:{s:o}}", "data", "repository", repo));
}

static void gql_update_refs(fakegh *f, struct answer *a, json_t *vars)
{
	json_t *input = json_object_get(vars, "input");
	json_t *ups = json_object_get(input, "refUpdates"), *u;
	const char *rid = json_string_value(json_object_get(input, "repositoryId"));
	char msg[512];
	size_t i;

	if (!rid || strcmp(rid, REPO_ID) != 0) {
		answer_gql_error(a, "NOT_FOUND", "updateRefs",
		                 "Could not resolve to a node with the global id of '?'");
		return;
	}
	if (!json_array_size(ups)) {
		answer_gql_error(a, "UNPROCESSABLE", "updateRefs", "No ref updates given.");
		return;
	}
	/* Atomic, as GitHub's GraphQL reference says of updateRefs: "All
	 * updates are performed atomically, meaning that if one of them is
	 * rejected, no other ref will be modified" (docs.github.com/graphql/
	 * reference/mutations#updaterefs). Every update is checked first (the
	 * handler runs under f->mu, so nothing changes between check and
	 * apply); a failure while applying restores the refs applied before
	 * it. A name given twice is refused. */
	json_array_foreach(ups, i, u)
	{
		const char *nm = json_string_value(json_object_get(u, "name"));
		const char *before = json_string_value(json_object_get(u, "beforeOid"));
		const char *after = json_string_value(json_object_get(u, "afterOid"));
		git_oid b, af, cur;
		int present;
		size_t j;
		if (!nm || !before || !after || git_oid_fromstr(&b, before) < 0 ||
		    git_oid_fromstr(&af, after) < 0 || !valid_refname(nm)) {
			answer_gql_error(a, "UNPROCESSABLE", "updateRefs", "Invalid ref update.");
			return;
		}
		for (j = 0; j < i; j++)
			if (strcmp(nm, json_string_value(json_object_get(json_array_get(ups, j),
			                                                 "name"))) == 0) {
				answer_gql_error(a, "UNPROCESSABLE", "updateRefs",
				                 "Invalid ref update: a ref is updated twice.");
				return;
			}
		present = lookup_ref(f, nm, &cur);
		if (f->ignore_before_forced && json_is_true(json_object_get(u, "force")))
			continue; /* the broken server of reflease check's test */
		if ((present && !git_oid_equal(&cur, &b)) || (!present && !git_oid_is_zero(&b))) {
			char ch[41] = ZERO_HEX;
			if (present)
				hex_of(ch, &cur);
			snprintf(msg, sizeof(msg),
			         "Expected %s to point to \"%s\" but it points to \"%s\".", nm,
			         before, ch);
			answer_gql_error(a, "STALE_DATA", "updateRefs", msg);
			return;
		}
		if (!git_oid_is_zero(&af)) {
			git_object *o = NULL;
			git_oid base;
			if (git_object_lookup(&o, f->repo, &af, GIT_OBJECT_ANY) < 0) {
				answer_gql_error(a, "UNPROCESSABLE", "updateRefs",
				                 "Object does not exist");
				return;
			}
			git_object_free(o);
			/* RefUpdate.force (schema text): "Allows updates to a ref that
			 * are not fast-forwards"; without it a replace must descend
			 * from beforeOid — a blob tip never does (issue 15 #5). */
			if (present && !json_is_true(json_object_get(u, "force")) &&
			    (git_merge_base(&base, f->repo, &cur, &af) < 0 ||
			     !git_oid_equal(&base, &cur))) {
				snprintf(msg, sizeof(msg), "Update to %s is not a fast forward",
				         nm);
				answer_gql_error(a, "UNPROCESSABLE", "updateRefs", msg);
				return;
			}
		}
	}
	json_array_foreach(ups, i, u)
	{
		const char *nm = json_string_value(json_object_get(u, "name"));
		git_oid b, af;
		git_reference *r = NULL;
		int err = 0;
		git_oid_fromstr(&b, json_string_value(json_object_get(u, "beforeOid")));
		git_oid_fromstr(&af, json_string_value(json_object_get(u, "afterOid")));
		if (git_oid_is_zero(&af))
			err = git_reference_remove(f->repo, nm);
		else if (f->ignore_before_forced && json_is_true(json_object_get(u, "force")))
			err = git_reference_create(&r, f->repo, nm, &af, 1, "fakegh: forced");
		else if (git_oid_is_zero(&b))
			err = git_reference_create(&r, f->repo, nm, &af, 0, "fakegh");
		else
			err = git_reference_create_matching(&r, f->repo, nm, &af, 1, &b, "fakegh");
		git_reference_free(r);
		if (err < 0) {
			size_t j;
			/* undo the updates applied so far: back to each beforeOid */
			for (j = 0; j < i; j++) {
				json_t *uj = json_array_get(ups, j);
				const char *nj = json_string_value(json_object_get(uj, "name"));
				git_oid bj;
				git_reference *rj = NULL;
				git_oid_fromstr(
				        &bj, json_string_value(json_object_get(uj, "beforeOid")));
				if (git_oid_is_zero(&bj))
					git_reference_remove(f->repo, nj);
				else if (git_reference_create(&rj, f->repo, nj, &bj, 1,
				                              "fakegh undo") == 0)
					git_reference_free(rj);
			}
			answer_gql_error(a, "STALE_DATA", "updateRefs", "Reference update failed");
			return;
		}
		note_write(f, nm, !git_oid_is_zero(&b), &b);
	}
	answer_json(a, 200, json_pack("{s:{s:{s:n}}}", "data", "updateRefs", "clientMutationId"));
}

/* ---- dispatch ------------------------------------------------------------------- */

/* The REST git data endpoints: method, path (below /repos/O/R/) exact or as
 * a prefix. */
static const struct route {
	const char *method, *path;
	int prefix;
	fakegh_endpoint ep;
} routes[] = {
        {"POST", "git/commits", 0, FAKEGH_COMMIT_POST},
        {"GET", "git/commits/", 1, FAKEGH_COMMIT_GET},
        {"GET", "git/ref/", 1, FAKEGH_REF_GET},
        {"POST", "git/refs", 0, FAKEGH_REF_CREATE},
        {"PATCH", "git/refs/", 1, FAKEGH_REF_PATCH},
        {"DELETE", "git/refs/", 1, FAKEGH_REF_DELETE},
        {"GET", "git/matching-refs/", 1, FAKEGH_MATCHING},
};

static fakegh_endpoint classify(const char *method, const char *rest, json_t *body)
{
	size_t i;

	if (!rest)
		return FAKEGH_OTHER;
	if (strcmp(rest, "/graphql") == 0 && strcmp(method, "POST") == 0) {
		const char *q = json_string_value(json_object_get(body, "query"));
		if (q && strncmp(q, "mutation", 8) == 0)
			return FAKEGH_GQL_MUTATION;
		return FAKEGH_GQL_QUERY;
	}
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct route *r = &routes[i];
		if (strcmp(method, r->method) == 0 &&
		    (r->prefix ? strncmp(rest, r->path, strlen(r->path)) == 0
		               : strcmp(rest, r->path) == 0))
			return r->ep;
	}
	return FAKEGH_OTHER;
}

/* The part after /repos/OWNER/REPO/ (or "/graphql"); NULL when foreign. Sets
 * *wrong_repo when the path names another repository. */
static const char *route(fakegh *f, const char *url, int *wrong_repo)
{
	char pre[256];
	size_t n;

	*wrong_repo = 0;
	if (strncmp(url, "/api/v3/", 8) == 0)
		url += 7;
	if (strcmp(url, "/graphql") == 0 || strcmp(url, "/api/graphql") == 0)
		return "/graphql";
	if (strncmp(url, "/repositories/" REPO_NUM "/", 14 + strlen(REPO_NUM) + 1) == 0)
		return url + 14 + strlen(REPO_NUM) + 1;
	if (strncmp(url, "/repos/", 7) != 0)
		return NULL;
	n = (size_t)snprintf(pre, sizeof(pre), "/repos/%s/%s/", f->owner, f->name);
	if (strncmp(url, pre, n) != 0) {
		*wrong_repo = 1;
		return NULL;
	}
	return url + n;
}

/* Take the first pending fault for @p ep. */
static int take_fault(fakegh *f, fakegh_endpoint ep, struct fault *out)
{
	int i;

	for (i = 0; i < f->nfaults; i++) {
		struct fault *ft = &f->faults[i];
		if (ft->count > 0 && (ft->ep == FAKEGH_ANY || ft->ep == ep)) {
			*out = *ft;
			if (--ft->count == 0) {
				memmove(ft, ft + 1, (size_t)(f->nfaults - i - 1) * sizeof(*ft));
				f->nfaults--;
			}
			return 1;
		}
	}
	return 0;
}

/* Answer a fault that replaces the normal answer; 0 when @p ft lets it through. */
/* A GraphQL rate limit's headers: the primary limit spent, reset in
 * @p reset_in s (> 0), or none at all (0: the shape reported without them). */
static void rate_limit_headers(struct answer *a, int reset_in)
{
	if (reset_in > 0) {
		a->rl_zero = 1;
		a->rl_reset_in = reset_in;
	} else {
		a->no_rl_headers = 1;
	}
}

static int apply_fault(fakegh *f, struct answer *a, const struct fault *ft, fakegh_endpoint ep)
{
	int gql = ep == FAKEGH_GQL_QUERY || ep == FAKEGH_GQL_MUTATION;

	switch (ft->kind) {
	case FAKEGH_FAULT_5XX:
		answer_msg(a, ft->arg >= 500 && ft->arg < 600 ? (unsigned)ft->arg : 502,
		           "Server Error");
		return 1;
	case FAKEGH_FAULT_403_RETRY:
		answer_msg(a, 403,
		           "You have exceeded a secondary rate limit. Please wait a few "
		           "minutes before you try again.");
		a->retry_after = ft->arg;
		return 1;
	case FAKEGH_FAULT_403_RESET:
		answer_msg(a, 403, "API rate limit exceeded for user ID 1.");
		a->rl_zero = 1;
		a->rl_reset_in = ft->arg;
		return 1;
	case FAKEGH_FAULT_403_NOHDR:
		answer_msg(a, 403,
		           "You have exceeded a secondary rate limit. Please wait a few "
		           "minutes before you try again.");
		a->no_rl_headers = 1;
		return 1;
	case FAKEGH_FAULT_429_RETRY:
		answer_msg(a, 429, "Too Many Requests");
		a->retry_after = ft->arg;
		return 1;
	case FAKEGH_FAULT_429_NOHDR:
		answer_msg(a, 429, "Too Many Requests");
		a->no_rl_headers = 1;
		return 1;
	case FAKEGH_FAULT_GQL_RATE_LIMITED:
		if (!gql)
			return 0;
		answer_gql_error(a, "RATE_LIMITED", NULL,
		                 "API rate limit already exceeded for user ID 1.");
		rate_limit_headers(a, ft->arg);
		return 1;
	case FAKEGH_FAULT_422_RULES:
		if (gql)
			answer_gql_error(a, "UNPROCESSABLE", "updateRefs",
			                 "Repository rule violations found\n\nCannot update this "
			                 "protected ref.\n\n");
		else
			answer_msg(a, 422,
			           "Repository rule violations found\n\nCannot create ref "
			           "due to creations being restricted.\n\n");
		return 1;
	case FAKEGH_FAULT_401: answer_msg(a, 401, "Bad credentials"); return 1;
	case FAKEGH_FAULT_403_FORBIDDEN:
		if (gql)
			answer_gql_error(a, "FORBIDDEN",
			                 ep == FAKEGH_GQL_MUTATION ? "updateRefs" : NULL,
			                 "Resource not accessible by integration");
		else
			answer_msg(a, 403, "Resource not accessible by integration");
		return 1;
	case FAKEGH_FAULT_409_EMPTY: answer_msg(a, 409, "Git Repository is empty."); return 1;
	case FAKEGH_FAULT_NO_UPDATEREFS:
		if (ep != FAKEGH_GQL_MUTATION)
			return 0;
		answer_json(a, 200,
		            json_pack("{s:[{s:[s,s], s:{s:s, s:s, s:s}, s:[{s:i, s:i}], s:s}]}",
		                      "errors", "path", "mutation", "updateRefs", "extensions",
		                      "code", "undefinedField", "typeName", "Mutation", "fieldName",
		                      "updateRefs", "locations", "line", 1, "column", 40, "message",
		                      "Field 'updateRefs' doesn't exist on type 'Mutation'"));
		return 1;
	case FAKEGH_FAULT_STALL: {
		struct timespec ts = {ft->arg / 1000, (long)(ft->arg % 1000) * 1000000L};
		pthread_mutex_unlock(&f->mu);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&f->mu);
		return 0;
	}
	case FAKEGH_FAULT_GQL_REFUSED:
		if (ep != FAKEGH_GQL_MUTATION)
			return 0;
		answer_gql_error(a, "UNPROCESSABLE", "updateRefs",
		                 "Too many ref updates in a short time (FAKE:0038)");
		return 1;
	case FAKEGH_FAULT_GQL_INTERNAL:
		if (!gql)
			return 0;
		answer_json(
		        a, 200,
		        json_pack("{s:n, s:[{s:s}]}", "data", "errors", "message",
		                  "Something went wrong while executing your query. This may be "
		                  "the result of a timeout, or it could be a GitHub bug. Please "
		                  "include `FAKE:0001` when reporting this issue."));
		return 1;
	case FAKEGH_FAULT_GQL_RATE_LIMIT:
	case FAKEGH_FAULT_GQL_403_RATE_LIMIT:
		/* octokit/plugin-throttling.js#824 (bodies attached), #848;
		 * githubkit#271: `type` RATE_LIMIT, `code` graphql_rate_limit, in a
		 * 200 — or a 403 whose body is only errors[] */
		if (!gql)
			return 0;
		answer_json(a, ft->kind == FAKEGH_FAULT_GQL_403_RATE_LIMIT ? 403 : 200,
		            json_pack("{s:[{s:s, s:s, s:s}]}", "errors", "type", "RATE_LIMIT",
		                      "code", "graphql_rate_limit", "message",
		                      "API rate limit already exceeded for user ID 1."));
		rate_limit_headers(a, ft->arg);
		return 1;
	case FAKEGH_FAULT_GQL_UNTYPED_RATE_LIMIT:
		/* issue 15 #2: a 200 whose error carries neither type nor code */
		if (!gql)
			return 0;
		answer_json(a, 200,
		            json_pack("{s:n, s:[{s:s}]}", "data", "errors", "message",
		                      "API rate limit exceeded for user ID 1. If you reach out to "
		                      "GitHub Support for help, please include the request ID "
		                      "FAKE:0001."));
		a->no_rl_headers = 1;
		return 1;
	case FAKEGH_FAULT_422_UPDATE_FAILED:
		/* github/rest-api-description#4887, exercism/website#8248: a
		 * sporadic 422 on POST /git/refs; nothing was created */
		if (ep != FAKEGH_REF_CREATE)
			return 0;
		answer_msg(a, 422, "Reference update failed");
		return 1;
	case FAKEGH_FAULT_DROP: a->drop = 1; return 0;
	case FAKEGH_FAULT_HTML_200:
		/* issue 24 #5: a proxy (TLS inspection, a captive or "continue"
		 * interstitial page) forwards the request, then answers 200 with
		 * its own HTML page instead of GitHub's JSON */
		a->html = 1;
		return 0;
	case FAKEGH_FAULT_407:
		/* RFC 9110 §15.5.8: a proxy that wants credentials answers 407 with
		 * Proxy-Authenticate; nothing reaches GitHub (issue 24 #5) */
		answer_msg(a, 407, "Proxy Authentication Required");
		a->no_rl_headers = 1;
		return 1;
	case FAKEGH_FAULT_403_ABUSE:
		/* GitHub's secondary limit in its older wording, still answered by
		 * some GHES releases, without retry-after ("abuse rate limits",
		 * developer.github.com/v3/#abuse-rate-limits; octokit
		 * plugin-throttling.js matches /\babuse\b/i) */
		answer_json(
		        a, 403,
		        json_pack("{s:s, s:s}", "message",
		                  "You have triggered an abuse detection mechanism. Please wait "
		                  "a few minutes before you try again.",
		                  "documentation_url",
		                  "https://developer.github.com/v3/#abuse-rate-limits"));
		return 1;
	}
	return 0;
}

static void handle(fakegh *f, struct answer *a, fakegh_endpoint ep, const char *rest, json_t *body,
                   int page)
{
	char ref[512];

	/* an empty repository: its REST git data endpoints answer 409 */
	if (ep >= FAKEGH_COMMIT_POST && ep <= FAKEGH_MATCHING && repo_is_empty(f)) {
		answer_msg(a, 409, "Git Repository is empty.");
		return;
	}
	switch (ep) {
	case FAKEGH_COMMIT_POST: h_commit_post(f, a, body); break;
	case FAKEGH_COMMIT_GET: h_commit_get(f, a, rest + 12); break;
	case FAKEGH_REF_GET:
		snprintf(ref, sizeof(ref), "refs/%s", rest + 8);
		h_ref_get(f, a, ref);
		break;
	case FAKEGH_REF_CREATE: h_ref_create(f, a, body); break;
	case FAKEGH_REF_PATCH:
	case FAKEGH_REF_DELETE:
		snprintf(ref, sizeof(ref), "refs/%s", rest + 9);
		if (ep == FAKEGH_REF_PATCH)
			h_ref_patch(f, a, ref, body);
		else
			h_ref_delete(f, a, ref);
		break;
	case FAKEGH_MATCHING:
		snprintf(ref, sizeof(ref), "refs/%s", rest + 18);
		h_matching(f, a, ref, rest, page);
		break;
	case FAKEGH_GQL_QUERY:
	case FAKEGH_GQL_MUTATION: {
		if (ep == FAKEGH_GQL_MUTATION && f->no_update_refs) {
			struct fault nf = {FAKEGH_GQL_MUTATION, FAKEGH_FAULT_NO_UPDATEREFS, 1, 0};
			apply_fault(f, a, &nf, ep);
			break;
		}
		const char *q = json_string_value(json_object_get(body, "query"));
		json_t *vars = json_object_get(body, "variables");
		if (!q) {
			answer_json(a, 200,
			            json_pack("{s:[{s:s}]}", "errors", "message",
			                      "A query attribute must be specified and must be a "
			                      "string."));
		} else if (ep == FAKEGH_GQL_MUTATION) {
			if (strstr(q, "updateRefs"))
				gql_update_refs(f, a, vars);
			else
				answer_gql_error(a, "INTERNAL", NULL,
				                 "fakegh: unsupported mutation");
		} else {
			gql_query(f, a, q, vars);
		}
		break;
	}
	default: answer_msg(a, 404, "Not Found"); break;
	}
}

/* ---- control endpoints (process mode) --------------------------------------------- */

/* GitHub's secondary limit on content-creating requests (80 a minute, 500 an
 * hour: docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api,
 * "About secondary rate limits") counts requests that create or change
 * content: here every POST /git/commits, POST /git/refs, PATCH and DELETE of
 * a ref and every GraphQL mutation (updateRefs) — a heartbeat is 2. */
unsigned fakegh_content_creating(fakegh *f)
{
	return f->counts[FAKEGH_COMMIT_POST] + f->counts[FAKEGH_REF_CREATE] +
	       f->counts[FAKEGH_REF_PATCH] + f->counts[FAKEGH_REF_DELETE] +
	       f->counts[FAKEGH_GQL_MUTATION];
}

static json_t *stats_json(fakegh *f)
{
	json_t *by = json_object();
	int i;

	for (i = 1; i < FAKEGH_N_ENDPOINTS; i++)
		json_object_set_new(by, ep_names[i], json_integer(f->counts[i]));
	return json_pack("{s:i, s:i, s:i, s:i, s:o}", "total", f->counts[FAKEGH_ANY], "counted",
	                 f->counted, "not_modified", f->not_modified, "content_creating",
	                 fakegh_content_creating(f), "by_endpoint", by);
}

static void control(fakegh *f, struct answer *a, const char *what, json_t *body)
{
	if (strcmp(what, "stats") == 0) {
		answer_json(a, 200, stats_json(f));
	} else if (strcmp(what, "reset") == 0) {
		memset(f->counts, 0, sizeof(f->counts));
		f->counted = f->not_modified = 0;
		f->nfaults = 0;
		answer_json(a, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(what, "moved") == 0) {
		/* {"location": BASE} as fakegh_set_moved(); {"location": null} undoes it */
		const char *loc = json_string_value(json_object_get(body, "location"));
		f->moved = loc != NULL;
		snprintf(f->moved_to, sizeof(f->moved_to), "%s", loc ? loc : "");
		answer_json(a, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(what, "ratelimit") == 0) {
		/* {"limit": L, "remaining": R[, "resource": "core"]}: announce a
		 * budget of L with R left (then one less per counted answer), e.g.
		 * under 10 % (issue 39); for one resource only when named */
		json_int_t lim = json_integer_value(json_object_get(body, "limit"));
		json_int_t rem = json_integer_value(json_object_get(body, "remaining"));
		const char *res = json_string_value(json_object_get(body, "resource"));
		snprintf(f->rl_resource, sizeof(f->rl_resource), "%s", res ? res : "");
		f->rl_limit = lim > 0 ? (long)lim : 5000;
		f->rl_used = rem >= 0 && rem <= f->rl_limit ? f->rl_limit - (long)rem : 0;
		answer_json(a, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(what, "lag") == 0) {
		f->lag_ms = (int)json_integer_value(json_object_get(body, "ms"));
		answer_json(a, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(what, "fault") == 0) {
		const char *ep = json_string_value(json_object_get(body, "endpoint"));
		const char *kind = json_string_value(json_object_get(body, "kind"));
		int e = ep ? fakegh_endpoint_parse(ep) : 0,
		    k = kind ? fakegh_fault_parse(kind) : -1;
		json_t *c = json_object_get(body, "count");
		if (e < 0 || k < 0 || f->nfaults == MAX_FAULTS) {
			answer_msg(a, 422, "unknown endpoint or fault");
			return;
		}
		f->faults[f->nfaults++] =
		        (struct fault){(fakegh_endpoint)e, (fakegh_fault_kind)k,
		                       c ? (int)json_integer_value(c) : 1,
		                       (int)json_integer_value(json_object_get(body, "arg"))};
		answer_json(a, 200, json_pack("{s:b}", "ok", 1));
	} else {
		answer_msg(a, 404, "Not Found");
	}
}

static void log_line(fakegh *f, const char *method, const char *url, fakegh_endpoint ep,
                     unsigned status, int drop)
{
	char line[600];
	char **nl;

	if (f->nlog >= LOG_MAX)
		return;
	if (f->nlog % 256 == 0) {
		int64_t *nt;
		if (!(nl = realloc(f->log, (f->nlog + 256) * sizeof(*nl))))
			return;
		f->log = nl;
		if (!(nt = realloc(f->log_ms, (f->nlog + 256) * sizeof(*nt))))
			return;
		f->log_ms = nt;
	}
	f->log_ms[f->nlog] = mono_ms(f);
	snprintf(line, sizeof(line), "%s %s %s %s", method, url, fakegh_endpoint_name(ep),
	         drop ? "dropped" : "");
	if (!drop)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%u", status);
	f->log[f->nlog++] = strdup(line);
}

static enum MHD_Result add_headers(fakegh *f, struct MHD_Response *resp, const struct answer *a)
{
	char buf[64];
	time_t now = (time_t)server_time(f);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	MHD_add_response_header(resp, "Date", buf);
	MHD_add_response_header(resp, "Content-Type",
	                        a->html ? "text/html; charset=utf-8"
	                                : "application/json; charset=utf-8");
	if (a->status == 407)
		MHD_add_response_header(resp, "Proxy-Authenticate", "Basic realm=\"fakegh proxy\"");
	MHD_add_response_header(resp, "X-GitHub-Api-Version-Selected", "2022-11-28");
	MHD_add_response_header(resp, "X-GitHub-Request-Id", "FAKE:0001");
	if (!a->no_rl_headers) {
		if (a->status != 304)
			f->rl_used++;
		/* GitHub's names: x-ratelimit-limit, -remaining, -used, -reset (UTC
		 * epoch seconds) and -resource ("core", "graphql", ...) on every
		 * answer (docs.github.com/en/rest/using-the-rest-api/
		 * rate-limits-for-the-rest-api, "Checking the status of your rate
		 * limit"; GraphQL: docs.github.com/en/graphql/overview/
		 * rate-limits-and-query-limits-for-the-graphql-api) */
		const char *res = a->resource ? a->resource : "core";
		long lim =
		        f->rl_limit > 0 && (!f->rl_resource[0] || strcmp(f->rl_resource, res) == 0)
		                ? f->rl_limit
		                : 5000L;
		snprintf(buf, sizeof(buf), "%ld", lim);
		MHD_add_response_header(resp, "x-ratelimit-limit", buf);
		snprintf(buf, sizeof(buf), "%ld",
		         a->rl_zero || f->rl_used >= lim ? 0L : lim - f->rl_used % lim);
		MHD_add_response_header(resp, "x-ratelimit-remaining", buf);
		snprintf(buf, sizeof(buf), "%lld",
		         (long long)(server_time(f) + (a->rl_zero ? a->rl_reset_in : 3600)));
		MHD_add_response_header(resp, "x-ratelimit-reset", buf);
		snprintf(buf, sizeof(buf), "%ld", f->rl_used % lim);
		MHD_add_response_header(resp, "x-ratelimit-used", buf);
		MHD_add_response_header(resp, "x-ratelimit-resource", res);
	}
	if (a->link[0])
		MHD_add_response_header(resp, "Link", a->link);
	if (a->location[0])
		MHD_add_response_header(resp, "Location", a->location);
	if (a->retry_after >= 0) {
		snprintf(buf, sizeof(buf), "%ld", a->retry_after);
		MHD_add_response_header(resp, "retry-after", buf);
	}
	return MHD_YES;
}

/* ---- conditional requests ------------------------------------------------------------ */
/* GitHub answers a REST GET with an `ETag` (a weak validator of the body,
 * W/"<hash>"); a GET carrying a matching `If-None-Match` gets 304 Not Modified
 * with no body, and "making a conditional request does not count against your
 * primary rate limit if a 304 response is returned and the request was made
 * while correctly authorized with an Authorization header" (docs.github.com,
 * REST API, "Best practices for using the REST API": use conditional requests
 * if appropriate). Here the ETag is the body's git blob id. */
static void etag_of(const char *body, char out[48])
{
	git_oid oid;
	char hex[41];

	git_odb_hash(&oid, body, strlen(body), GIT_OBJECT_BLOB);
	git_oid_tostr(hex, sizeof(hex), &oid);
	snprintf(out, 48, "W/\"%s\"", hex);
}

/* Does the If-None-Match list @p inm name @p etag (weak comparison: "W/" is
 * ignored on both sides; "*" matches anything)? */
static int etag_listed(const char *inm, const char *etag)
{
	const char *want = strncmp(etag, "W/", 2) == 0 ? etag + 2 : etag;
	size_t wlen = strlen(want);

	while (*inm) {
		size_t n;
		while (*inm == ' ' || *inm == ',')
			inm++;
		if (strncmp(inm, "W/", 2) == 0)
			inm += 2;
		n = strcspn(inm, ",");
		while (n > 0 && inm[n - 1] == ' ')
			n--;
		if ((n == 1 && *inm == '*') || (n == wlen && strncmp(inm, want, n) == 0))
			return 1;
		inm += n;
		while (*inm && *inm != ',')
			inm++;
	}
	return 0;
}

/* A 200 to a GET gets its ETag; a matching If-None-Match turns it into a 304. */
static void conditional(fakegh *f, struct MHD_Connection *conn, const char *method,
                        struct answer *a, char etag[48])
{
	const char *inm;

	etag[0] = '\0';
	if (strcmp(method, "GET") != 0 || a->status != 200 || !a->body)
		return;
	etag_of(a->body, etag);
	inm = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match");
	if (inm && etag_listed(inm, etag)) {
		free(a->body);
		a->body = NULL;
		a->status = 304;
		f->not_modified++;
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	fakegh *f = cls;
	struct req *rq = *con_cls;
	struct answer a = {0, NULL, 0, -1, 0, 0, 0, "", "", NULL, 0};
	struct MHD_Response *resp;
	json_t *body = NULL;
	fakegh_endpoint ep;
	struct fault ft;
	const char *rest, *auth, *ua;
	int wrong_repo, faulted = 0;
	enum MHD_Result ret;
	char etag[48] = "";

	(void)version;
	if (!rq) {
		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (rq->len + *upload_data_size > BODY_MAX) {
			rq->too_big = 1;
		} else {
			char *nb = realloc(rq->body, rq->len + *upload_data_size + 1);
			if (!nb)
				return MHD_NO;
			rq->body = nb;
			memcpy(rq->body + rq->len, upload_data, *upload_data_size);
			rq->len += *upload_data_size;
			rq->body[rq->len] = '\0';
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rq->body)
		body = json_loadb(rq->body, rq->len, 0, NULL);

	pthread_mutex_lock(&f->mu);
	if (strncmp(url, "/_fakegh/", 9) == 0) {
		control(f, &a, url + 9, body);
		goto respond;
	}
	if (strcmp(method, "CONNECT") == 0) {
		/* Used as an HTTPS proxy (issue 24 #5): a pending 407 fault is the
		 * proxy asking for credentials (RFC 9110 §15.5.8); otherwise it
		 * refuses the tunnel, as a proxy's deny rule does (403) */
		f->counts[FAKEGH_ANY]++;
		f->counts[FAKEGH_OTHER]++;
		if (take_fault(f, FAKEGH_OTHER, &ft) && ft.kind == FAKEGH_FAULT_407)
			apply_fault(f, &a, &ft, FAKEGH_OTHER);
		else
			answer_msg(&a, 403, "fakegh: tunnel refused by the proxy's rules");
		a.no_rl_headers = 1;
		log_line(f, method, url, FAKEGH_OTHER, a.status, 0);
		goto respond;
	}
	rest = route(f, url, &wrong_repo);
	ep = classify(method, rest, body);
	f->counts[FAKEGH_ANY]++;
	f->counts[ep]++;
	a.resource = strcmp(url, "/graphql") == 0 ? "graphql" : "core";
	auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	ua = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");
	if (!ua || !*ua) {
		answer_msg(&a, 403,
		           "Request forbidden by administrative rules. Please make sure "
		           "your request has a User-Agent header.");
	} else if (!auth || strncmp(auth, "Bearer ", 7) != 0 || !auth[7] ||
	           (f->token && strcmp(auth + 7, f->token) != 0)) {
		answer_msg(&a, 401, "Bad credentials");
	} else if (rq->too_big) {
		answer_msg(&a, 413, "Payload too large");
	} else if (wrong_repo) {
		answer_msg(&a, 404, "Not Found");
	} else if (f->moved && rest && strncmp(url, "/repos/", 7) == 0) {
		/* @octokit/fixtures rename-repository: 301 for GET, 307 otherwise,
		 * Location = the same path under the repository's new place */
		unsigned st = strcmp(method, "GET") == 0 ? 301 : 307;
		snprintf(a.location, sizeof(a.location), "%s/%s",
		         f->moved_to[0] ? f->moved_to : f->url, rest);
		if (!f->moved_to[0])
			snprintf(a.location, sizeof(a.location), "%s/repositories/" REPO_NUM "/%s",
			         f->url, rest);
		answer_json(&a, st,
		            json_pack("{s:s, s:s, s:s}", "message", "Moved Permanently", "url",
		                      a.location, "documentation_url",
		                      "https://docs.github.com/v3/#http-redirects"));
	} else if (rq->body && !body) {
		answer_msg(&a, 400, "Problems parsing JSON");
	} else {
		if (take_fault(f, ep, &ft))
			faulted = apply_fault(f, &a, &ft, ep);
		if (!faulted) {
			const char *pg =
			        MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "page");
			handle(f, &a, ep, rest, body, pg ? (int)strtol(pg, NULL, 10) : 1);
			conditional(f, conn, method, &a, etag);
		}
	}
	if (a.html) { /* applied; the page replaces GitHub's answer */
		free(a.body);
		a.body = strdup("<!DOCTYPE html><html><head><title>Continue</title></head><body>"
		                "This site is inspected by your organisation's proxy. <a "
		                "href=\"/continue\">Continue</a></body></html>");
		a.status = 200;
		a.no_rl_headers = 1;
	}
	if (a.status != 304)
		f->counted++;
	log_line(f, method, url, ep, a.status, a.drop);
respond:
	pthread_mutex_unlock(&f->mu);
	json_decref(body);
	if (a.drop) {
		free(a.body);
		return MHD_NO; /* applied, answer lost */
	}
	if (a.body)
		resp = MHD_create_response_from_buffer(strlen(a.body), a.body,
		                                       MHD_RESPMEM_MUST_FREE);
	else
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	pthread_mutex_lock(&f->mu);
	add_headers(f, resp, &a);
	if (etag[0])
		MHD_add_response_header(resp, "ETag", etag);
	pthread_mutex_unlock(&f->mu);
	ret = MHD_queue_response(conn, a.status ? a.status : 500, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rq) {
		free(rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

/* ---- lifecycle ----------------------------------------------------------------------- */

static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[2048];
	struct stat st;

	if (d) {
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
				rm_rf(sub);
			else
				unlink(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

static int init_repo(fakegh *f, int empty)
{
	git_treebuilder *tb = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid oid;
	int rc = -1;

	if (git_repository_open_bare(&f->repo, f->path) < 0 &&
	    git_repository_init(&f->repo, f->path, 1) < 0) {
		fprintf(stderr, "fakegh: cannot open %s: %s\n", f->path, git_error_last()->message);
		return -1;
	}
	if (git_treebuilder_new(&tb, f->repo, NULL) < 0 ||
	    git_treebuilder_write(&f->empty_tree, tb) < 0)
		goto out;
	if (!empty && repo_is_empty(f)) {
		if (git_tree_lookup(&tree, f->repo, &f->empty_tree) < 0 ||
		    git_signature_new(&sig, "fakegh", "fakegh@localhost",
		                      (git_time_t)server_time(f), 0) < 0 ||
		    git_commit_create(&oid, f->repo, "refs/heads/main", sig, sig, NULL,
		                      "Initial commit", tree, 0, NULL) < 0 ||
		    git_repository_set_head(f->repo, "refs/heads/main") < 0)
			goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		fprintf(stderr, "fakegh: repository setup failed: %s\n",
		        git_error_last() ? git_error_last()->message : "?");
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	return rc;
}

int fakegh_start(fakegh **out, const fakegh_options *opts)
{
	fakegh_options none;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;
	fakegh *f;
	const char *tmp;

	*out = NULL;
	if (!opts) {
		memset(&none, 0, sizeof(none));
		opts = &none;
	}
	if (!(f = calloc(1, sizeof(*f))))
		return -1;
	pthread_mutex_init(&f->mu, NULL);
	git_libgit2_init();
	snprintf(f->owner, sizeof(f->owner), "%s", opts->owner ? opts->owner : "octo");
	snprintf(f->name, sizeof(f->name), "%s", opts->repo ? opts->repo : "leases");
	f->token = opts->token ? strdup(opts->token) : NULL;
	f->offset = opts->time_offset_s;
	f->clock_ms = opts->clock_ms;
	f->clock_payload = opts->clock_payload;
	f->gql_blind = opts->graphql_blind;
	f->gql_view = opts->graphql_view;
	f->page_size = opts->page_size;
	f->no_update_refs = opts->no_update_refs;
	f->ignore_before_forced = opts->ignore_before_oid_when_forced;
	if (opts->repo_path) {
		snprintf(f->path, sizeof(f->path), "%s", opts->repo_path);
	} else {
		tmp = getenv("TMPDIR");
		snprintf(f->path, sizeof(f->path), "%s/fakegh-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(f->path)) {
			perror("fakegh: mkdtemp");
			goto fail;
		}
		f->temp = 1;
	}
	if (init_repo(f, opts->empty) < 0)
		goto fail;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(opts->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (opts->tls_cert_pem && opts->tls_key_pem) {
		/* HTTPS with a test CA's certificate (libmicrohttpd over GnuTLS) */
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			fprintf(stderr, "fakegh: this libmicrohttpd has no TLS support\n");
			goto fail;
		}
		f->d = MHD_start_daemon(
		        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_SUPPRESS_DATE_NO_CLOCK |
		                MHD_USE_TLS,
		        opts->port, NULL, NULL, on_request, f, MHD_OPTION_SOCK_ADDR, &sa,
		        MHD_OPTION_NOTIFY_COMPLETED, on_completed, f, MHD_OPTION_CONNECTION_TIMEOUT,
		        (unsigned)60, MHD_OPTION_HTTPS_MEM_KEY, opts->tls_key_pem,
		        MHD_OPTION_HTTPS_MEM_CERT, opts->tls_cert_pem, MHD_OPTION_END);
	} else {
		f->d = MHD_start_daemon(
		        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_SUPPRESS_DATE_NO_CLOCK,
		        opts->port, NULL, NULL, on_request, f, MHD_OPTION_SOCK_ADDR, &sa,
		        MHD_OPTION_NOTIFY_COMPLETED, on_completed, f, MHD_OPTION_CONNECTION_TIMEOUT,
		        (unsigned)60, MHD_OPTION_END);
	}
	if (!f->d) {
		fprintf(stderr, "fakegh: cannot start the HTTP daemon\n");
		goto fail;
	}
	info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
	f->port = info ? info->port : 0;
	snprintf(f->url, sizeof(f->url), "%s://%s:%u", opts->tls_cert_pem ? "https" : "http",
	         opts->tls_cert_pem ? "localhost" : "127.0.0.1", (unsigned)f->port);
	*out = f;
	return 0;
fail:
	fakegh_stop(f);
	return -1;
}

int fakegh_start_clocked(fakegh **out, const fakegh_options *opts,
                         int64_t (*clock_ms)(void *payload), void *payload)
{
	fakegh_options o;

	if (opts)
		o = *opts;
	else
		memset(&o, 0, sizeof(o));
	o.clock_ms = clock_ms;
	o.clock_payload = payload;
	return fakegh_start(out, &o);
}

void fakegh_stop(fakegh *f)
{
	size_t i;

	if (!f)
		return;
	if (f->d)
		MHD_stop_daemon(f->d);
	git_repository_free(f->repo);
	if (f->temp)
		rm_rf(f->path);
	for (i = 0; i < f->nlog; i++)
		free(f->log[i]);
	free(f->log);
	free(f->log_ms);
	free(f->token);
	pthread_mutex_destroy(&f->mu);
	git_libgit2_shutdown();
	free(f);
}

void fakegh_set_token(fakegh *f, const char *token)
{
	pthread_mutex_lock(&f->mu);
	free(f->token);
	f->token = token ? strdup(token) : NULL;
	pthread_mutex_unlock(&f->mu);
}

unsigned short fakegh_port(const fakegh *f)
{
	return f->port;
}

const char *fakegh_url(const fakegh *f)
{
	return f->url;
}

const char *fakegh_repo_path(const fakegh *f)
{
	return f->path;
}

void fakegh_fault(fakegh *f, fakegh_endpoint ep, fakegh_fault_kind kind, int count, int arg)
{
	pthread_mutex_lock(&f->mu);
	if (f->nfaults < MAX_FAULTS)
		f->faults[f->nfaults++] = (struct fault){ep, kind, count, arg};
	pthread_mutex_unlock(&f->mu);
}

void fakegh_clear_faults(fakegh *f)
{
	pthread_mutex_lock(&f->mu);
	f->nfaults = 0;
	pthread_mutex_unlock(&f->mu);
}

void fakegh_set_read_lag(fakegh *f, int ms)
{
	pthread_mutex_lock(&f->mu);
	f->lag_ms = ms;
	pthread_mutex_unlock(&f->mu);
}

unsigned fakegh_count(fakegh *f, fakegh_endpoint ep)
{
	unsigned n;

	pthread_mutex_lock(&f->mu);
	n = ep >= 0 && ep < FAKEGH_N_ENDPOINTS ? f->counts[ep] : 0;
	pthread_mutex_unlock(&f->mu);
	return n;
}

unsigned fakegh_counted(fakegh *f, unsigned *not_modified)
{
	unsigned n;

	pthread_mutex_lock(&f->mu);
	n = f->counted;
	if (not_modified)
		*not_modified = f->not_modified;
	pthread_mutex_unlock(&f->mu);
	return n;
}

void fakegh_reset_counts(fakegh *f)
{
	size_t i;

	pthread_mutex_lock(&f->mu);
	memset(f->counts, 0, sizeof(f->counts));
	f->counted = f->not_modified = 0;
	for (i = 0; i < f->nlog; i++)
		free(f->log[i]);
	free(f->log);
	free(f->log_ms);
	f->log = NULL;
	f->log_ms = NULL;
	f->nlog = 0;
	pthread_mutex_unlock(&f->mu);
}

size_t fakegh_log_size(fakegh *f)
{
	size_t n;

	pthread_mutex_lock(&f->mu);
	n = f->nlog;
	pthread_mutex_unlock(&f->mu);
	return n;
}

int fakegh_log_line(fakegh *f, size_t i, char *buf, size_t len)
{
	int rc = -1;

	pthread_mutex_lock(&f->mu);
	if (i < f->nlog && f->log[i]) {
		snprintf(buf, len, "%s", f->log[i]);
		rc = 0;
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void fakegh_set_moved(fakegh *f, const char *location_base)
{
	pthread_mutex_lock(&f->mu);
	f->moved = location_base != NULL;
	snprintf(f->moved_to, sizeof(f->moved_to), "%s", location_base ? location_base : "");
	pthread_mutex_unlock(&f->mu);
}

int64_t fakegh_log_time_ms(fakegh *f, size_t i)
{
	int64_t t = -1;

	pthread_mutex_lock(&f->mu);
	if (i < f->nlog && f->log_ms)
		t = f->log_ms[i];
	pthread_mutex_unlock(&f->mu);
	return t;
}

int fakegh_set_ref(fakegh *f, const char *refname, const char *hex)
{
	git_reference *r = NULL;
	git_oid oid;
	int rc;

	pthread_mutex_lock(&f->mu);
	if (!hex)
		rc = git_reference_remove(f->repo, refname);
	else if ((rc = git_oid_fromstr(&oid, hex)) == 0)
		rc = git_reference_create(&r, f->repo, refname, &oid, 1, "fakegh: set");
	git_reference_free(r);
	pthread_mutex_unlock(&f->mu);
	return rc < 0 ? -1 : 0;
}

int fakegh_write_blob(fakegh *f, const char *content, char *hex_out)
{
	git_oid oid;
	int rc;

	pthread_mutex_lock(&f->mu);
	rc = git_blob_create_from_buffer(&oid, f->repo, content, strlen(content));
	pthread_mutex_unlock(&f->mu);
	if (rc < 0)
		return -1;
	hex_of(hex_out, &oid);
	return 0;
}

int fakegh_get_ref(fakegh *f, const char *refname, char *hex_out)
{
	git_oid oid;
	int present;

	pthread_mutex_lock(&f->mu);
	present = lookup_ref(f, refname, &oid);
	pthread_mutex_unlock(&f->mu);
	if (present)
		hex_of(hex_out, &oid);
	return present;
}
