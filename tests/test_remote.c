/* The remote backend (protocol.md §3, §9 "remote") against real git servers
 * the suite starts on 127.0.0.1: git daemon --enable=receive-pack (git://),
 * git http-backend behind lighttpd (http://), sshd with an ssh-agent
 * (ssh://) and file://. The primitives on
 * each; pushes the server rejects (a stale old oid caught by the negotiation
 * callback, one caught by receive-pack under its ref lock, a refusing
 * pre-receive hook) are never success; a push the server reports applied but
 * undoes (a no-op) is caught by post-state verification; credentials; and 16
 * processes (build/tools/contend) contending for one lease through git daemon
 * never overlap (F23, once with a cache per process, once with one shared
 * cache). */
#define _GNU_SOURCE
#include <check.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "reflease/primitives.h"
#include "reflease/runtime.h"
#include "store/backend.h"
#include "store/handle.h"
#include "support/gitserver.h"
#include "support/storefix.h"
#include "support/suitefix.h"
#include "support/testrepo.h"
#include "support/textcase.h"
#include "util/util.h"

static gitserver srv;
static int srv_up, ssh_up;
static unsigned int msg_counter;
static char cache_dir[800];   /* the object cache of the stores a test opens */
static const char *git_token; /* their https credential (NULL = none) */

static void srv_setup(void)
{
	/* Only the servers this suite starts (libgit2 and libcurl read the
	 * proxy variables): no proxy in between. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	git_token = NULL;
	srv_up = gitserver_start(&srv) == 0;
	ssh_up = srv_up && gitserver_start_ssh(&srv) == 0;
	if (srv_up)
		snprintf(cache_dir, sizeof(cache_dir), "%.700s/cache/reflease", srv.root);
}

static void srv_teardown(void)
{
	if (srv_up)
		gitserver_stop(&srv);
	srv_up = ssh_up = 0;
}

/* ssh clients of this test process: the agent holding the key, and a HOME
 * whose .ssh/known_hosts lists sshd's host key (libgit2 1.5.1 checks it). */
static void ssh_client_env(void)
{
	ck_assert_msg(ssh_up, "sshd or ssh-agent did not start (openssh-server installed?)");
#if defined(__SANITIZE_ADDRESS__)
	/* libgit2 1.5.1 leaks ~300 bytes per ssh connection (its known_hosts
	 * check: a buffer and libssh2's knownhost list, never freed). Under
	 * LSan this test process tracks no allocation from here on; the same
	 * code paths are leak-checked over git:// and http://. */
	__lsan_disable();
#endif
	setenv("HOME", srv.ssh_home, 1);
	setenv("SSH_AUTH_SOCK", srv.agent_sock, 1);
	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, srv.ssh_home);
}

typedef struct rstore {
	lease_store *st;
	char name[64]; /* the served repository's name */
	char path[700];
	char url[800];
} rstore;

/* A fresh repository @p name reached as @p kind, opened with @p verify_ms. */
static void open_kind(rstore *r, gitserver_kind kind, const char *name, int verify_ms, int fresh)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	char spec[900];

	ck_assert_msg(srv_up, "git servers did not start (git daemon, lighttpd)");
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	if (fresh)
		ck_assert_int_eq(gitserver_repo(&srv, name, r->path, sizeof(r->path)), 0);
	else
		snprintf(r->path, sizeof(r->path), "%s/%s.git", srv.root, name);
	gitserver_url(&srv, kind, name, r->url, sizeof(r->url));
	if (kind == GITSERVER_SSH)
		ssh_client_env();
	snprintf(spec, sizeof(spec), "remote:%s", r->url);
	o.verify_timeout_ms = verify_ms;
	o.cache_dir = cache_dir;
	o.git_token = git_token;
	r->st = storefix_open(spec, &o);
}

static void open_new(rstore *r, gitserver_kind kind, int verify_ms)
{
	char name[64];

	snprintf(name, sizeof(name), "r%ld", (long)getpid());
	open_kind(r, kind, name, verify_ms, 1);
}

static void make_msg(char *out, size_t outlen, const char *name)
{
	snprintf(out, outlen,
	         "%s: acquire claimed by o on h\n\n"
	         "{\"acquired_at\":\"2026-11-30T07:00:00Z\",\"expires_at\":\"2026-11-30T07:05:"
	         "00Z\",\"host\":\"h\",\"lease_token\":\"0123456789abcdef0123456789abcdef\","
	         "\"name\":\"%s\",\"nonce\":\"%016x\",\"owner\":\"o\",\"phase\":\"claimed\","
	         "\"sdlc_version\":\"1.1.0\",\"transitions\":0,\"ttl_seconds\":300}\n",
	         name, name, ++msg_counter);
}

static lease_oid commit_for(rstore *r, const char *name, const lease_oid *parent)
{
	char msg[1024];
	lease_oid oid;
	int rc;

	make_msg(msg, sizeof(msg), name);
	rc = lease_write_commit(&oid, r->st, parent, msg);
	ck_assert_msg(rc == 0, "write_commit: %s", lease_store_last_error(r->st));
	return oid;
}

/* The server's own view of refs/leases/<lease> ("" when absent). */
static void server_ref(rstore *r, const char *lease, char *hex, size_t hexlen)
{
	char args[256];

	snprintf(args, sizeof(args), "rev-parse -q --verify refs/leases/%s", lease);
	hex[0] = '\0';
	testrepo_git(hex, hexlen, r->path, args);
	hex[strcspn(hex, "\n")] = '\0';
}

static void assert_server_ref(rstore *r, const char *lease, const lease_oid *oid)
{
	char hex[128], want[LEASE_OID_HEXSZ + 1] = "";

	server_ref(r, lease, hex, sizeof(hex));
	if (oid)
		lease_oid_tohex(want, oid);
	ck_assert_str_eq(hex, want);
}

/* A commit made on the server behind the client's back. */
static lease_oid server_commit(rstore *r, const char *msg)
{
	char args[256], hex[128];
	lease_oid oid;

	ck_assert_int_eq(testrepo_git(NULL, 0, r->path, "mktree </dev/null"), 0);
	snprintf(args, sizeof(args),
	         "-c user.name=x -c user.email=x@x commit-tree "
	         "4b825dc642cb6eb9a060e54bf8d69288fbee4904 -m '%s'",
	         msg);
	ck_assert_int_eq(testrepo_git(hex, sizeof(hex), r->path, args), 0);
	hex[strcspn(hex, "\n")] = '\0';
	ck_assert_int_eq(lease_oid_fromhex(&oid, hex), 0);
	return oid;
}

static void server_set_ref(rstore *r, const char *lease, const lease_oid *oid)
{
	char args[256], hex[LEASE_OID_HEXSZ + 1];

	lease_oid_tohex(hex, oid);
	snprintf(args, sizeof(args), "update-ref refs/leases/%s %s", lease, hex);
	ck_assert_int_eq(testrepo_git(NULL, 0, r->path, args), 0);
}

/* Loop index -> server. ssh:// last: sshd takes ~0.8 s per connection here,
 * so only some tests loop over it. */
static const gitserver_kind kinds[] = {GITSERVER_GIT, GITSERVER_HTTP, GITSERVER_FILE,
                                       GITSERVER_SSH};
/* Servers that run hooks (file:// does not). */
static const gitserver_kind hook_kinds[] = {GITSERVER_GIT, GITSERVER_HTTP, GITSERVER_SSH};

START_TEST(figures)
{
	rstore r;

	open_new(&r, kinds[_i], -1);
	ck_assert_str_eq(lease_store_kind(r.st), "remote");
	ck_assert_int_eq(lease_store_skew_margin(r.st), 30);
	ck_assert_int_eq(lease_store_ttl_min(r.st), 60);
	ck_assert_int_eq(r.st->verify_timeout_ms, 10000);
	lease_store_free(r.st);
}
END_TEST

/* F26: every repository here starts empty (no commits) and serves as a store.
 * create / read / list (with the parent) / replace / delete, each checked
 * against the server's own view; a second client with its own cache sees
 * the same through fetches. */
START_TEST(primitives_roundtrip)
{
	rstore r, r2;
	lease_ref_state s;
	lease_namespace ns;
	lease_oid a, b;
	char cache2[600], out[4096];

	open_new(&r, kinds[_i], 2000);
	a = commit_for(&r, "job-1", NULL);
	ck_assert_msg(lease_cas_create(r.st, "job-1", &a) == 0, "%s", lease_store_last_error(r.st));
	assert_server_ref(&r, "job-1", &a);
	ck_assert_int_eq(lease_fetch_ref(&s, r.st, "job-1"), 0);
	ck_assert_int_eq(s.present, 1);
	ck_assert(lease_oid_equal(&s.oid, &a));
	ck_assert_int_eq(s.payload_rc, 0);
	ck_assert_str_eq(s.payload.name, "job-1");
	lease_ref_state_clear(&s);

	b = commit_for(&r, "job-1", &a);
	ck_assert_msg(lease_cas_replace(r.st, "job-1", &a, &b) == 0, "%s",
	              lease_store_last_error(r.st));
	assert_server_ref(&r, "job-1", &b);

	/* Another client, another cache: everything comes through a fetch. */
	snprintf(cache2, sizeof(cache2), "%.500s/cache-%ld-2", srv.root, (long)getpid());
	snprintf(cache_dir, sizeof(cache_dir), "%s/reflease", cache2);
	open_kind(&r2, kinds[_i], r.name, 2000, 0);
	ck_assert_int_eq(lease_fetch_namespace(&ns, r2.st), 0);
	ck_assert_int_eq(ns.count, 1);
	ck_assert_str_eq(ns.leases[0].name, "job-1");
	ck_assert(lease_oid_equal(&ns.leases[0].oid, &b));
	ck_assert_int_eq(ns.leases[0].has_parent_commit, 1);
	ck_assert(lease_oid_equal(&ns.leases[0].parent_commit.oid, &a));
	lease_namespace_clear(&ns);
	ck_assert_int_eq(lease_fetch_ref(&s, r2.st, "job-1"), 0);
	ck_assert(lease_oid_equal(&s.commit.oid, &b));
	lease_ref_state_clear(&s);

	/* The second client deletes; the first sees it absent. */
	ck_assert_msg(lease_cas_delete(r2.st, "job-1", &b) == 0, "%s",
	              lease_store_last_error(r2.st));
	assert_server_ref(&r, "job-1", NULL);
	ck_assert_int_eq(lease_fetch_ref(&s, r.st, "job-1"), 0);
	ck_assert_int_eq(s.present, 0);
	lease_ref_state_clear(&s);
	ck_assert_int_eq(lease_fetch_namespace(&ns, r.st), 0);
	ck_assert_int_eq(ns.count, 0);
	lease_namespace_clear(&ns);

	/* No push ref is left behind in either cache. */
	if (kinds[_i] != GITSERVER_FILE) {
		char cmd[2400];
		FILE *p;
		size_t n;

		snprintf(cmd, sizeof(cmd),
		         "for d in '%s'/cache/reflease/*.git '%s'/reflease/*.git; do "
		         "git -C \"$d\" for-each-ref refs/reflease/out/; done",
		         srv.root, cache2);
		p = popen(cmd, "r");
		ck_assert_ptr_nonnull(p);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = '\0';
		pclose(p);
		ck_assert_msg(n == 0, "push refs left behind: %s", out);
	}
	lease_store_free(r2.st);
	lease_store_free(r.st);
}
END_TEST

/* A stale expected oid: the negotiation callback aborts, nothing is sent
 * (CAS failure, outcome known); a create over an existing ref fails. */
START_TEST(stale_old_oid)
{
	rstore r;
	lease_oid a, b, c, d;
	const lease_cas_error *e;

	open_new(&r, kinds[_i], 500);
	a = commit_for(&r, "job-2", NULL);
	ck_assert_int_eq(lease_cas_create(r.st, "job-2", &a), 0);
	c = server_commit(&r, "intruder");
	server_set_ref(&r, "job-2", &c);

	b = commit_for(&r, "job-2", &a);
	ck_assert_int_eq(lease_cas_replace(r.st, "job-2", &a, &b), LEASE_ECAS);
	e = lease_store_last_cas_error(r.st);
	ck_assert_int_eq(e->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_int_eq(e->observed_present, 1);
	ck_assert(lease_oid_equal(&e->observed, &c));
	assert_server_ref(&r, "job-2", &c);

	/* A create of the oid the ref already holds: "already present", flagged
	 * noop, never success (§3). The client has read that state (which
	 * fetches its object; the post-state re-read above is an ls-remote
	 * alone, read_ref_oid), as the runtime reads before it writes. */
	{
		lease_ref_state s;
		ck_assert_int_eq(lease_fetch_ref(&s, r.st, "job-2"), 0);
		ck_assert(lease_oid_equal(&s.oid, &c));
		lease_ref_state_clear(&s);
	}
	ck_assert_int_eq(lease_cas_create(r.st, "job-2", &c), LEASE_ECAS);
	ck_assert_int_eq(lease_store_last_cas_error(r.st)->noop, 1);

	d = commit_for(&r, "job-2", NULL);
	ck_assert_int_eq(lease_cas_create(r.st, "job-2", &d), LEASE_ECAS);
	ck_assert_int_eq(lease_store_last_cas_error(r.st)->noop, 1);
	assert_server_ref(&r, "job-2", &c);

	ck_assert_int_eq(lease_cas_delete(r.st, "job-2", &a), LEASE_ECAS);
	ck_assert_int_eq(lease_store_last_cas_error(r.st)->outcome, LEASE_OUTCOME_KNOWN);
	assert_server_ref(&r, "job-2", &c);
	lease_store_free(r.st);
}
END_TEST

/* A lease @p name created on a new store of @p kind (verify window
 * @p verify_ms), the server's @p hook then set to @p script, and a replace
 * of the lease tried: its code; *a the created commit, *b the one tried. */
static int replace_under_hook(rstore *r, gitserver_kind kind, int verify_ms, const char *name,
                              const char *hook, const char *script, lease_oid *a, lease_oid *b)
{
	open_new(r, kind, verify_ms);
	*a = commit_for(r, name, NULL);
	ck_assert_int_eq(lease_cas_create(r->st, name, a), 0);
	ck_assert_int_eq(gitserver_hook(&srv, r->name, hook, script), 0);
	*b = commit_for(r, name, a);
	return lease_cas_replace(r->st, name, a, b);
}

/* The ref moves after the advertisement, inside the server, before
 * receive-pack takes its ref lock: receive-pack's own old-oid compare rejects
 * the update and the per-ref status reports it (git_remote_push returns 0). */
START_TEST(stale_under_lock)
{
	rstore r;
	lease_oid a, b;
	char hex[128], ahex[LEASE_OID_HEXSZ + 1];
	int rc;

	rc = replace_under_hook(&r, hook_kinds[_i], 500, "job-3", "pre-receive",
	                        "unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY "
	                        "GIT_ALTERNATE_OBJECT_DIRECTORIES\n"
	                        "git mktree </dev/null >/dev/null\n"
	                        "c=$(git -c user.name=x -c user.email=x@x commit-tree "
	                        "4b825dc642cb6eb9a060e54bf8d69288fbee4904 -m intruder)\n"
	                        "git update-ref refs/leases/job-3 \"$c\"\n",
	                        &a, &b);
	ck_assert_msg(rc == LEASE_ECAS, "replace: %d %s", rc, lease_store_last_error(r.st));
	server_ref(&r, "job-3", hex, sizeof(hex));
	lease_oid_tohex(ahex, &a);
	ck_assert_str_ne(hex, ahex);
	ck_assert_int_eq(strlen(hex), LEASE_OID_HEXSZ);
	ck_assert(strcmp(hex, ahex) != 0);
	{
		char bhex[LEASE_OID_HEXSZ + 1];
		lease_oid_tohex(bhex, &b);
		ck_assert_str_ne(hex, bhex);
	}
	lease_store_free(r.st);
}
END_TEST

/* Issue 14 item 4, F10: a foreign ref below the name on the remote
 * (refs/leases/a/b when creating a): exit 78 naming it, at once (a known
 * outcome, no waiting out the verify window). */
START_TEST(df_conflict_named)
{
	rstore r;
	lease_oid a;
	char args[256], ahex[LEASE_OID_HEXSZ + 1], out[256];
	struct timespec t0, t1;
	int rc;

	open_new(&r, hook_kinds[_i], 5000);
	a = commit_for(&r, "a", NULL);
	lease_oid_tohex(ahex, &a);
	ck_assert_int_eq(lease_cas_create(r.st, "x", &a), 0);
	snprintf(args, sizeof(args), "update-ref refs/leases/a/b %s", ahex);
	ck_assert_int_eq(testrepo_git(out, sizeof(out), r.path, args), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = lease_cas_create(r.st, "a", &a);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(rc == LEASE_ECONFIG, "create: %d %s", rc, lease_store_last_error(r.st));
	ck_assert_msg(strstr(lease_store_last_error(r.st), "refs/leases/a/b") != NULL, "%s",
	              lease_store_last_error(r.st));
	ck_assert_int_eq(lease_store_last_cas_error(r.st)->outcome, LEASE_OUTCOME_KNOWN);
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 5);
	lease_store_free(r.st);
}
END_TEST

/* F25: a pre-receive hook that refuses (a repository rule): a permission
 * error, never success. */
START_TEST(hook_refuses)
{
	rstore r;
	lease_oid a, b, c;
	int rc;

	rc = replace_under_hook(&r, hook_kinds[_i], 500, "job-4", "pre-receive",
	                        "echo 'leases are frozen' >&2\nexit 1\n", &a, &b);
	ck_assert_msg(rc == LEASE_EAUTH || rc == LEASE_ECAS, "replace: %d", rc);
	ck_assert_int_eq(lease_store_last_cas_error(r.st)->outcome, LEASE_OUTCOME_KNOWN);
	assert_server_ref(&r, "job-4", &a);
	c = commit_for(&r, "job-5", NULL);
	rc = lease_cas_create(r.st, "job-5", &c);
	ck_assert_msg(rc == LEASE_EAUTH || rc == LEASE_ECAS, "create: %d", rc);
	assert_server_ref(&r, "job-5", NULL);
	rc = lease_cas_delete(r.st, "job-4", &a);
	ck_assert_msg(rc == LEASE_EAUTH || rc == LEASE_ECAS, "delete: %d", rc);
	assert_server_ref(&r, "job-4", &a);
	lease_store_free(r.st);
}
END_TEST

/* The server reports the update applied, then undoes it (a no-op as far as
 * the ref is concerned): post-state verification refuses to call it success. */
START_TEST(noop_push_caught)
{
	rstore r;
	lease_oid a, b;
	const lease_cas_error *e;
	int rc;

	rc = replace_under_hook(&r, hook_kinds[_i], 300, "job-6", "post-receive",
	                        "while read old new ref; do git update-ref \"$ref\" "
	                        "\"$old\"; done\n",
	                        &a, &b);
	ck_assert_msg(rc == LEASE_EUNVERIFIED, "replace: %d %s", rc, lease_store_last_error(r.st));
	e = lease_store_last_cas_error(r.st);
	ck_assert_int_eq(e->noop, 1);
	ck_assert_int_eq(e->outcome, LEASE_OUTCOME_UNKNOWN);
	assert_server_ref(&r, "job-6", &a);
	lease_store_free(r.st);
}
END_TEST

/* REFLEASE_GIT_TOKEN for http(s): without it an authentication error, with a
 * wrong one too, with the right one the store works; never in a message. */
START_TEST(token_auth)
{
	rstore r;
	lease_namespace ns;
	lease_oid a;
	int rc;

	git_token = NULL;
	ck_assert_int_eq(gitserver_repo(&srv, "authrepo", NULL, 0), 0);
	open_kind(&r, GITSERVER_HTTP_AUTH, "authrepo", 500, 0);
	rc = lease_fetch_namespace(&ns, r.st);
	ck_assert_msg(rc == LEASE_EAUTH, "no token: %d %s", rc, lease_store_last_error(r.st));
	ck_assert(strstr(lease_store_last_error(r.st), "REFLEASE_GIT_TOKEN") != NULL);
	lease_store_free(r.st);

	git_token = "wrong-token";
	open_kind(&r, GITSERVER_HTTP_AUTH, "authrepo", 500, 0);
	rc = lease_fetch_namespace(&ns, r.st);
	ck_assert_msg(rc == LEASE_EAUTH, "wrong token: %d %s", rc, lease_store_last_error(r.st));
	ck_assert(strstr(lease_store_last_error(r.st), "wrong-token") == NULL);
	lease_store_free(r.st);

	{
		char tok[64];

		snprintf(tok, sizeof(tok), "%s", GITSERVER_AUTH_TOKEN);
		git_token = tok;
		open_kind(&r, GITSERVER_HTTP_AUTH, "authrepo", 500, 0);
		git_token = NULL;
		memset(tok, 0, sizeof(tok)); /* copied at open */
	}
	a = commit_for(&r, "job-7", NULL);
	ck_assert_msg(lease_cas_create(r.st, "job-7", &a) == 0, "%s", lease_store_last_error(r.st));
	ck_assert_int_eq(lease_fetch_namespace(&ns, r.st), 0);
	ck_assert_int_eq(ns.count, 1);
	lease_namespace_clear(&ns);
	lease_store_free(r.st);
}
END_TEST

/* Issue 23: remote:http://USER@HOST/... with REFLEASE_GIT_TOKEN sends the
 * right credential first on every connection — no failed login (libgit2
 * would first send USER with an empty password: 4 failed logins per
 * acquire, and hosts ban IPs for that); a wrong token is offered once per
 * connection, never twice. Counted at the server (lighttpd's access log). */
START_TEST(url_user_right_credential_first)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_store *st = NULL;
	lease_namespace ns;
	lease_result res;
	lease_op_options op = LEASE_OP_OPTIONS_INIT;
	char spec[600], err[512];
	int before, rc;

	ck_assert_msg(srv_up, "git servers did not start (git daemon, lighttpd)");
	ck_assert_int_eq(gitserver_repo(&srv, "userrepo", NULL, 0), 0);
	snprintf(spec, sizeof(spec),
	         "remote:http://" GITSERVER_AUTH_USER "@127.0.0.1:%d/auth/userrepo.git",
	         srv.http_port);
	o.git_token = GITSERVER_AUTH_TOKEN;
	o.cache_dir = cache_dir;
	o.verify_timeout_ms = 500;
	ck_assert_int_eq(lease_store_open(&st, spec, &o, err, sizeof(err)), 0);
	before = gitserver_failed_logins(&srv);
	op.owner = "alice";
	op.host = "h";
	op.ttl_seconds = 120;
	ck_assert_msg(lease_acquire(&res, st, "cred", &op) == 0, "%s", res.message);
	ck_assert_int_eq(lease_fetch_namespace(&ns, st), 0);
	lease_namespace_clear(&ns);
	ck_assert_int_eq(gitserver_failed_logins(&srv) - before, 0);
	lease_store_free(st);

	o.git_token = "wrong-token";
	ck_assert_int_eq(lease_store_open(&st, spec, &o, err, sizeof(err)), 0);
	before = gitserver_failed_logins(&srv);
	rc = lease_fetch_namespace(&ns, st);
	ck_assert_msg(rc == LEASE_EAUTH, "%d %s", rc, lease_store_last_error(st));
	ck_assert_int_eq(gitserver_failed_logins(&srv) - before, 1);
	lease_store_free(st);
}
END_TEST

/* Issue 15 item 8: one loopback policy for the library, by parsing.
 * REFLEASE_GIT_TOKEN is offered over plain http only to a numeric
 * 127.0.0.0/8 or ::1 host or localhost — never to a host whose name merely
 * begins with "127." (the old prefix rule sent it to 127.example.com). */
START_TEST(token_never_to_non_loopback_http)
{
	/* want: 1 for a loopback host, 1 for a URL the token may go to */
	static const textcase hosts[] = {
	        {"127.0.0.1", 1},
	        {"127.255.0.9", 1},
	        {"localhost", 1},
	        {"LOCALHOST.", 1},
	        {"::1", 1},
	        {"[::1]", 1},
	        {"::ffff:127.0.0.2", 1},
	        {"127.example.invalid", 0},
	        {"127.0.0.1.invalid", 0},
	        {"127.1", 0},
	        {"localhost.invalid", 0},
	        {"128.0.0.1", 0},
	        {"::2", 0},
	        {"[::ffff:10.0.0.1]", 0},
	        {"", 0},
	};
	static const textcase urls[] = {
	        {"https://git.example.invalid/r.git", 1},
	        {"http://127.0.0.1:8080/r.git", 1},
	        {"http://x-access-token@127.0.0.9/r.git", 1},
	        {"http://localhost/r.git", 1},
	        {"http://[::1]:9/r.git", 1},
	        {"http://127.example.invalid/r.git", 0},
	        {"http://127.example.invalid:8080/r.git", 0},
	        {"http://user@127.example.invalid/r.git", 0},
	        {"http://127.0.0.1.example.invalid/r.git", 0},
	        {"http://localhost.example.invalid/r.git", 0},
	        {"http://[::2]/r.git", 0},
	        {"http://10.0.0.1/r.git", 0},
	        {"git://127.0.0.1/r.git", 0},
	        {"ssh://127.0.0.1/r.git", 0},
	};
	size_t i;

	for (i = 0; i < TEXTCASES(hosts); i++)
		ck_assert_msg(lease__host_is_loopback(hosts[i].text) == hosts[i].want, "%s",
		              hosts[i].text);
	ck_assert_int_eq(lease__host_is_loopback(NULL), 0);
	for (i = 0; i < TEXTCASES(urls); i++)
		ck_assert_msg(lease__remote_token_allowed(urls[i].text) == urls[i].want, "%s",
		              urls[i].text);
}
END_TEST

/* §3: "a transport that copies re-reads the remote ref and compares". The
 * ref moves from A to B while A's objects are being fetched into a fresh
 * cache: the read notices (the ref no longer holds A) and reads again,
 * answering B with B's own commit — never A after the ref left it. */
START_TEST(read_recheck_after_copy)
{
	rstore r, r2;
	lease_ref_state s;
	lease_oid a, b;
	char cache2[600], bhex[LEASE_OID_HEXSZ + 1], marker[1000];

	open_new(&r, hook_kinds[_i], 500);
	a = commit_for(&r, "job-8", NULL);
	ck_assert_int_eq(lease_cas_create(r.st, "job-8", &a), 0);
	b = commit_for(&r, "job-8", &a);
	ck_assert_int_eq(lease_cas_replace(r.st, "job-8", &a, &b), 0);
	server_set_ref(&r, "job-8", &a); /* back to A; B stays on the server */
	{
		/* keep B reachable for the second fetch: a ref outside the namespace */
		char args[200];
		lease_oid_tohex(bhex, &b);
		snprintf(args, sizeof(args), "update-ref refs/keep/b %s", bhex);
		ck_assert_int_eq(testrepo_git(NULL, 0, r.path, args), 0);
	}
	ck_assert_int_eq(gitserver_move_on_fetch(&srv, r.name, "refs/leases/job-8", bhex), 0);

	snprintf(cache2, sizeof(cache2), "%.500s/cache-%ld-recheck", srv.root, (long)getpid());
	snprintf(cache_dir, sizeof(cache_dir), "%s/reflease", cache2);
	open_kind(&r2, hook_kinds[_i], r.name, 500, 0);
	ck_assert_int_eq(lease_fetch_ref(&s, r2.st, "job-8"), 0);
	snprintf(marker, sizeof(marker), "%s/move-on-fetch", r.path);
	ck_assert_msg(access(marker, F_OK) != 0, "the race was never armed by a fetch");
	ck_assert_int_eq(s.present, 1);
	ck_assert_msg(lease_oid_equal(&s.oid, &b), "read answered the oid the ref had left");
	ck_assert(lease_oid_equal(&s.commit.oid, &b));
	lease_ref_state_clear(&s);
	lease_store_free(r2.st);
	lease_store_free(r.st);
}
END_TEST

/* ssh://: an unknown host key is a configuration error, no usable key in
 * the agent a permission error; neither ever reaches the repository. */
START_TEST(ssh_refusals)
{
	rstore r;
	lease_namespace ns;
	char kh[700], hidden[720];
	int rc;

	open_new(&r, GITSERVER_SSH, 500);
	setenv("SSH_AUTH_SOCK", "/nonexistent/agent.sock", 1);
	rc = lease_fetch_namespace(&ns, r.st);
	ck_assert_msg(rc == LEASE_EAUTH, "no agent: %d %s", rc, lease_store_last_error(r.st));
	setenv("SSH_AUTH_SOCK", srv.agent_sock, 1);
	snprintf(kh, sizeof(kh), "%s/.ssh/known_hosts", srv.ssh_home);
	snprintf(hidden, sizeof(hidden), "%s.hidden", kh);
	ck_assert_int_eq(rename(kh, hidden), 0);
	rc = lease_fetch_namespace(&ns, r.st);
	ck_assert_int_eq(rename(hidden, kh), 0);
	ck_assert_msg(rc == LEASE_ECONFIG, "unknown host: %d %s", rc, lease_store_last_error(r.st));
	ck_assert_int_eq(lease_fetch_namespace(&ns, r.st), 0);
	lease_namespace_clear(&ns);
	lease_store_free(r.st);
}
END_TEST

START_TEST(url_refusals)
{
	static const char *const bad[] = {
	        "remote:",
	        "remote:ftp://example.invalid/r.git",
	        "remote:https://user:secret@example.invalid/r.git",
	        "remote:file://relative/path",
	        "remote:git://",
	        "remote:example.invalid:r.git",
	};
	lease_store *st = NULL;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(lease_store_open(&st, bad[i], NULL, err, sizeof(err)),
		                 LEASE_EINVALID);
		ck_assert_ptr_null(st);
		ck_assert(err[0] != '\0');
		ck_assert(strstr(err, "secret") == NULL);
	}
}
END_TEST

#define CONTENDERS 16
#define TENURES    1

typedef struct tenure {
	double t0, t1;
	char owner[64];
	char token[40];
} tenure;

static int tenure_cmp(const void *a, const void *b)
{
	const tenure *x = a, *y = b;

	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static const char *build_dir(void)
{
	const char *b = getenv("REFLEASE_BUILD");

	return b && *b ? b : "build";
}

/* F23: 16 processes (build/tools/contend, the runtime's contention tool) race
 * for one lease through git daemon; _i = 0: a cache per process, _i = 1: one
 * cache shared by all. No two tenures overlap; the server's history holds one
 * acquire per tenure. */
START_TEST(contention_git_daemon)
{
	char url[800], spec[900], tool[1024], name[64], out[256], dir[800];
	tenure t[CONTENDERS * TENURES + 8];
	pid_t pids[CONTENDERS];
	size_t n = 0, k;
	int i, st;

	ck_assert_msg(srv_up, "git servers did not start");
	snprintf(tool, sizeof(tool), "%s/tools/contend", build_dir());
	ck_assert_msg(access(tool, X_OK) == 0, "%s missing (make all builds it)", tool);
	snprintf(name, sizeof(name), "contend%d-%ld", _i, (long)getpid());
	ck_assert_int_eq(gitserver_repo(&srv, name, dir, sizeof(dir)), 0);
	gitserver_url(&srv, GITSERVER_GIT, name, url, sizeof(url));
	snprintf(spec, sizeof(spec), "remote:%s", url);
	for (i = 0; i < CONTENDERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			char cache[900], owner[32], iter[16], log[900];

			if (_i == 0)
				snprintf(cache, sizeof(cache), "%s/%s-cache-%d", srv.root, name, i);
			else
				snprintf(cache, sizeof(cache), "%s/%s-cache-shared", srv.root,
				         name);
			snprintf(owner, sizeof(owner), "proc-%d", i);
			snprintf(iter, sizeof(iter), "%d", TENURES);
			snprintf(log, sizeof(log), "%s/%s-tenures-%d.log", srv.root, name, i);
			if (!freopen(log, "w", stdout))
				_exit(12);
			execl(tool, tool, spec, "contended", owner, iter, "60", cache,
			      (char *)NULL);
			_exit(13);
		}
	}
	for (i = 0; i < CONTENDERS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "contend %d: status %d", i,
		              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	for (i = 0; i < CONTENDERS; i++) {
		char log[900];
		FILE *f;

		snprintf(log, sizeof(log), "%s/%s-tenures-%d.log", srv.root, name, i);
		f = fopen(log, "r");
		ck_assert_ptr_nonnull(f);
		while (n < sizeof(t) / sizeof(t[0]) && fscanf(f, "%63s %39s %lf %lf", t[n].owner,
		                                              t[n].token, &t[n].t0, &t[n].t1) == 4)
			n++;
		fclose(f);
	}
	ck_assert_int_eq(n, CONTENDERS * TENURES);
	qsort(t, n, sizeof(t[0]), tenure_cmp);
	for (k = 1; k < n; k++) {
		ck_assert_msg(t[k].t0 >= t[k - 1].t1,
		              "tenures overlap: %s [%.3f,%.3f] and %s [%.3f,%.3f]", t[k - 1].owner,
		              t[k - 1].t0, t[k - 1].t1, t[k].owner, t[k].t0, t[k].t1);
		ck_assert_str_ne(t[k].token, t[k - 1].token);
	}
	/* The server's history agrees: one acquire commit per tenure. */
	ck_assert_int_eq(
	        testrepo_git(out, sizeof(out), dir,
	                     "log --format=%s refs/leases/contended | grep -c ': acquire '"),
	        0);
	ck_assert_int_eq(strtol(out, NULL, 10), CONTENDERS * TENURES);
}
END_TEST

Suite *remote_suite(void)
{
	const suitefix_fixture fx = {srv_setup, srv_teardown, 1};
	Suite *s = suite_create("remote");

	suitefix_add(s, "servers", 60, &fx, LOOP(figures, 0, 4), LOOP(primitives_roundtrip, 0, 4),
	             LOOP(stale_old_oid, 0, 3), LOOP(stale_under_lock, 0, 2),
	             LOOP(hook_refuses, 0, 3), LOOP(df_conflict_named, 0, 2),
	             LOOP(noop_push_caught, 0, 2), LOOP(read_recheck_after_copy, 0, 2),
	             ONE(token_auth), ONE(url_user_right_credential_first), ONE(ssh_refusals),
	             NULL);
	suitefix_add(s, "refusals", 0, NULL, ONE(url_refusals),
	             ONE(token_never_to_non_loopback_http), NULL);
	suitefix_add(s, "contention", 180, &fx, LOOP(contention_git_daemon, 0, 2), NULL);
	return s;
}
