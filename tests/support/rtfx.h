/* The runtime tests' fixture (tests/test_runtime.c, test_engine.c,
 * test_policy.c): a store with an injected clock and an interleaving hook,
 * identities, and helpers that read and write leases with assertions. */
#ifndef REFLEASE_TESTS_RTFX_H
#define REFLEASE_TESTS_RTFX_H

#include "reflease.h"
#include "support/memstore.h"

#include <stdint.h>

#define T0 1700000000

typedef struct fx fx;

typedef enum hook_on { H_NONE = 0, H_WRITE_COMMIT, H_CAS } hook_on;

typedef struct tclock {
	int64_t t;
	memstore *m;
	hook_on on; /* fire when this memstore counter reaches `at` */
	int at;
	int repeat;   /* fire again at every further count */
	int64_t jump; /* seconds added when firing */
	void (*action)(fx *f);
	int last; /* counter value at the last firing */
	int fired;
	int busy;
	fx *f;
} tclock;

struct fx {
	lease_store *st;
	memstore *m;
	tclock clk;
	char repo[512];
};

typedef struct ident {
	const char *owner, *host;
} ident;

extern const ident ALICE;
extern const ident ALICE2; /* moved */
extern const ident BOB;    /* other */
extern const char TOK1[];
extern const char STALE[];

/* The injected clock (lease_store_options.clock.now; payload: a tclock). */
int64_t tclock_now(void *payload);
/* Arm the clock's hook: when memstore counter @p on reaches @p at, add
 * @p jump seconds and run @p action (another party's write) once. */
void hook(fx *f, hook_on on, int at, int64_t jump, void (*action)(fx *));
/* A mem store (fault knobs in f->m) with the injected clock at T0. */
void fx_mem(fx *f);
/* fx_mem(), the store opened over @p wrap(mem transport, @p arg) instead: a
 * transport that owns the mem one (freed with the store); NULL: none. */
void fx_mem_through(fx *f, lease_transport *(*wrap)(lease_transport *mem, void *arg), void *arg);
/* A local store in a fresh bare repository, the injected clock at T0. */
void fx_local(fx *f);
void fx_free(fx *f);
/* Operation options as @p id with @p token and @p ttl (0: none). */
lease_op_options opt(ident id, const char *token, int64_t ttl);
/* Current state of a lease: 1 and the payload/oid when present. */
int cur(fx *f, const char *name, lease_payload *p, lease_oid *oid);
/* Acquire as @p id at the current clock; returns the token in @p tok. */
void must_acquire(fx *f, const char *name, ident id, int64_t ttl, char *tok);
void must_release(fx *f, const char *name, ident id, const char *tok);
/* A lease operation (lease_acquire, lease_heartbeat, lease_transition,
 * lease_release). */
typedef int (*lease_op_fn)(lease_result *out, lease_store *st, const char *name,
                           const lease_op_options *opts);
/* Run @p op on @p name with @p o into @p r: it returns 0 with @p status. */
void op_is(fx *f, lease_op_fn op, const char *name, const lease_op_options *o,
           lease_status_id status, lease_result *r);
/* A mem store (fx_mem) in which alice holds "l" (ttl 60); its token in @p tok. */
void fx_mem_held(fx *f, char *tok);
/* The token of the last bob_acquires() or alice_twin_acquires(). */
extern char bob_token[LEASE_TOKEN_HEXSZ + 1];
/* Hook actions (hook()): another party acquires "l" (ttl 60), its token to
 * bob_token: bob, or a twin with alice's owner and host (F03). */
void bob_acquires(fx *f);
void alice_twin_acquires(fx *f);
/* The ref's oid whatever its payload: 1 when present. */
int ref_oid(fx *f, const char *name, lease_oid *oid);
/* Another tool's write: @p message verbatim on top of the lease, by CAS. */
void raw_put(fx *f, const char *name, const char *message);
/* A payload message on ref @p name written by @p op, the payload naming
 * @p payload_name, in the given schema version; ttl < 0 omits ttl_seconds
 * (a pre-bump 1.0.0 payload). */
void put_payload_as(fx *f, const char *name, const char *op, const char *payload_name,
                    const char *version, ident id, const char *tok, const char *phase,
                    int64_t transitions, int64_t acq, int64_t exp, int64_t ttl);
/* A payload message in the given schema version (an acquire of @p name). */
void put_payload(fx *f, const char *name, const char *version, ident id, const char *tok,
                 const char *phase, int64_t transitions, int64_t acq, int64_t exp, int64_t ttl);
/* The mem store's call counters. */
const memstore_counts *counts(fx *f);
/* Commits reachable from the lease's tip by first parents. */
size_t chain_len(fx *f, const char *name);

#endif
