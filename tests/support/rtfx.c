/* The runtime tests' fixture (rtfx.h): moved from tests/test_runtime.c. */
#define _DEFAULT_SOURCE
#include "support/rtfx.h"

#include <check.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reflease/version.h"
#include "store/handle.h"
#include "support/testrepo.h"

/* ---- fixture: a store with an injected clock and an interleaving hook ---- */

static int hook_count(const tclock *c)
{
	const memstore_counts *k = memstore_counts_get(c->m);

	if (c->on == H_WRITE_COMMIT)
		return k->write_commit;
	return k->create_ref + k->replace_ref + k->delete_ref;
}

int64_t tclock_now(void *payload)
{
	tclock *c = payload;

	if (c->on != H_NONE && c->m && !c->busy) {
		int n = hook_count(c);
		if (n >= c->at && n != c->last && (c->repeat || !c->fired)) {
			c->last = n;
			c->fired++;
			c->t += c->jump;
			if (c->action) {
				c->busy = 1;
				c->action(c->f);
				c->busy = 0;
			}
		}
	}
	return c->t;
}

void hook(fx *f, hook_on on, int at, int64_t jump, void (*action)(fx *))
{
	memstore_counts_reset(f->m);
	f->clk.on = on;
	f->clk.at = at;
	f->clk.jump = jump;
	f->clk.action = action;
	f->clk.last = 0;
	f->clk.fired = 0;
	f->clk.repeat = 0;
}

void fx_mem_through(fx *f, lease_transport *(*wrap)(lease_transport *mem, void *arg), void *arg)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	lease_transport *t;

	memset(f, 0, sizeof(*f));
	f->clk.t = T0;
	f->clk.f = f;
	o.clock.now = tclock_now;
	o.clock.payload = &f->clk;
	t = memstore_new(&f->m);
	ck_assert_ptr_nonnull(t);
	if (wrap)
		t = wrap(t, arg);
	ck_assert_int_eq(lease_store_open_transport(&f->st, t, &o, NULL, 0), 0);
	f->clk.m = f->m;
}

void fx_mem(fx *f)
{
	fx_mem_through(f, NULL, NULL);
}

void fx_local(fx *f)
{
	lease_store_options o = LEASE_STORE_OPTIONS_INIT;
	char spec[600], err[256];

	memset(f, 0, sizeof(*f));
	f->clk.t = T0;
	f->clk.f = f;
	o.clock.now = tclock_now;
	o.clock.payload = &f->clk;
	ck_assert_int_eq(testrepo_make(f->repo, sizeof(f->repo), TESTREPO_BARE), 0);
	snprintf(spec, sizeof(spec), "local:%s", f->repo);
	ck_assert_msg(lease_store_open(&f->st, spec, &o, err, sizeof(err)) == 0, "%s", err);
	/* durability is not under test here: spare the disk (this process only) */
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 0);
}

void fx_free(fx *f)
{
	lease_store_free(f->st);
	if (f->repo[0])
		testrepo_remove(f->repo);
	memset(f, 0, sizeof(*f));
}

/* ---- identities and helpers ---------------------------------------------- */

const ident ALICE = {"alice", "h1"};
const ident ALICE2 = {"alice", "h2"}; /* moved */
const ident BOB = {"bob", "h1"};      /* other */

lease_op_options opt(ident id, const char *token, int64_t ttl)
{
	lease_op_options o = LEASE_OP_OPTIONS_INIT;

	o.owner = id.owner;
	o.host = id.host;
	o.lease_token = token;
	o.ttl_seconds = ttl;
	return o;
}

/* Current state of a lease: 1 and the payload/oid when present. */
int cur(fx *f, const char *name, lease_payload *p, lease_oid *oid)
{
	lease_ref_state s;
	int present;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, f->st, name), 0);
	present = s.present;
	if (present) {
		ck_assert_msg(s.payload_rc == 0, "unreadable: %s", s.payload_error);
		if (p)
			*p = s.payload;
		if (oid)
			*oid = s.oid;
	}
	lease_ref_state_clear(&s);
	return present;
}

/* Acquire as @p id at the current clock; returns the token in @p tok. */
void must_acquire(fx *f, const char *name, ident id, int64_t ttl, char *tok)
{
	lease_op_options o = opt(id, NULL, ttl);
	lease_result r;
	int rc = lease_acquire(&r, f->st, name, &o);

	ck_assert_msg(rc == 0, "acquire %s: %s (%s)", name, lease_status_name(r.status), r.message);
	ck_assert_int_eq(r.status, LEASE_STATUS_ACQUIRED);
	ck_assert_int_eq(r.holds_token, 1);
	if (tok)
		memcpy(tok, r.payload.lease_token, LEASE_TOKEN_HEXSZ + 1);
}

void op_is(fx *f, lease_op_fn op, const char *name, const lease_op_options *o,
           lease_status_id status, lease_result *r)
{
	int rc = op(r, f->st, name, o);

	ck_assert_msg(rc == 0, "%s: rc %d (%s)", name, rc, r->message);
	ck_assert_msg(r->status == status, "%s: %s, not %s", name, lease_status_name(r->status),
	              lease_status_name(status));
}

void fx_mem_held(fx *f, char *tok)
{
	fx_mem(f);
	must_acquire(f, "l", ALICE, 60, tok);
}

char bob_token[LEASE_TOKEN_HEXSZ + 1];

static void rival_acquires(fx *f, ident id)
{
	lease_op_options o = opt(id, NULL, 60);
	lease_result r;

	ck_assert_int_eq(lease_acquire(&r, f->st, "l", &o), 0);
	memcpy(bob_token, r.payload.lease_token, sizeof(bob_token));
}

void bob_acquires(fx *f)
{
	rival_acquires(f, BOB);
}

void alice_twin_acquires(fx *f)
{
	rival_acquires(f, ALICE);
}

void must_release(fx *f, const char *name, ident id, const char *tok)
{
	lease_op_options o = opt(id, tok, 0);
	lease_result r;

	ck_assert_int_eq(lease_release(&r, f->st, name, &o), 0);
	ck_assert_int_eq(r.status, LEASE_STATUS_RELEASED);
}

/* The ref's oid whatever its payload: 1 when present. */
int ref_oid(fx *f, const char *name, lease_oid *oid)
{
	lease_ref_state s;
	int present;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(lease_fetch_ref(&s, f->st, name), 0);
	present = s.present;
	if (present && oid)
		*oid = s.oid;
	lease_ref_state_clear(&s);
	return present;
}

/* Another tool's write: @p message verbatim on top of the lease, by CAS. */
void raw_put(fx *f, const char *name, const char *message)
{
	lease_oid parent, oid;
	int present = ref_oid(f, name, &parent);

	ck_assert_int_eq(lease_write_commit(&oid, f->st, present ? &parent : NULL, message), 0);
	if (present)
		ck_assert_int_eq(lease_cas_replace(f->st, name, &parent, &oid), 0);
	else
		ck_assert_int_eq(lease_cas_create(f->st, name, &oid), 0);
}

/* A payload message on ref @p name written by @p op, the payload naming
 * @p payload_name, in the given schema version; ttl < 0 omits ttl_seconds
 * (a pre-bump 1.0.0 payload). */
void put_payload_as(fx *f, const char *name, const char *op, const char *payload_name,
                    const char *version, ident id, const char *tok, const char *phase,
                    int64_t transitions, int64_t acq, int64_t exp, int64_t ttl)
{
	char a[LEASE_TIME_STRSZ + 1], e[LEASE_TIME_STRSZ + 1], ttlbuf[64] = "";
	char msg[2048];

	lease_time_format(a, acq);
	lease_time_format(e, exp);
	if (ttl >= 0)
		snprintf(ttlbuf, sizeof(ttlbuf), ",\"ttl_seconds\":%lld", (long long)ttl);
	snprintf(msg, sizeof(msg),
	         "%s: %s %s by %s on %s\n\n{\"acquired_at\":\"%s\",\"expires_at\":\"%s\","
	         "\"host\":\"%s\",\"lease_token\":\"%s\",\"name\":\"%s\",\"nonce\":"
	         "\"0123456789abcdef\",\"owner\":\"%s\",\"phase\":\"%s\",\"sdlc_version\":\"%s\","
	         "\"transitions\":%lld%s}\n",
	         name, op, phase, id.owner, id.host, a, e, id.host, tok, payload_name, id.owner,
	         phase, version, (long long)transitions, ttlbuf);
	raw_put(f, name, msg);
}

/* A payload message in the given schema version (an acquire of @p name). */
void put_payload(fx *f, const char *name, const char *version, ident id, const char *tok,
                 const char *phase, int64_t transitions, int64_t acq, int64_t exp, int64_t ttl)
{
	put_payload_as(f, name, "acquire", name, version, id, tok, phase, transitions, acq, exp,
	               ttl);
}

const char TOK1[] = "0123456789abcdef0123456789abcdef";
const char STALE[] = "ffffffffffffffffffffffffffffffff";

const memstore_counts *counts(fx *f)
{
	return memstore_counts_get(f->m);
}

/* Commits reachable from the lease's tip by first parents. */
size_t chain_len(fx *f, const char *name)
{
	lease_history h;
	size_t n;

	ck_assert_int_eq(lease_history_read(&h, f->st, name, 0, 0), 0);
	n = h.count;
	lease_history_free(&h);
	return n;
}
