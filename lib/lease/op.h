/**
 * @file op.h (internal)
 * What the runtime's operations share with the set operations (set.c): one
 * operation's context and decision, and the runtime's decide and answer
 * helpers (runtime.c). Single-lease operations live in runtime.c, sets in
 * set.c; both hand their writes to the one engine (commit.h).
 */
#ifndef REFLEASE_OP_H
#define REFLEASE_OP_H

#include "reflease/runtime.h"

#include <stdint.h>

typedef enum op_kind {
	OP_ACQUIRE = 0,
	OP_HEARTBEAT,
	OP_TRANSITION,
	OP_REACQUIRE,
	OP_RELEASE,
	OP_BREAK
} op_kind;

typedef struct op_ctx {
	op_kind kind;
	lease_store *st;
	const char *name;
	const lease_op_options *o;
	lease_result *out;
	lease_ref_state known; /* lease_op_options.known_*: the first round's state */
	int approximate;
	int refreshing; /* a landed write came too late: extend it as its holder */
	int refreshes;
	int has_late;
	lease_oid late_oid; /* the late write being refreshed */
	int token_changed;
	char mytoken[LEASE_TOKEN_HEXSZ + 1];
	lease_op_options opts; /* the caller's, with the strings below */
	char name_buf[LEASE_NAME_MAX + 2];
	char owner_buf[LEASE_IDENT_MAX + 2];
	char host_buf[LEASE_IDENT_MAX + 2];
	char token_buf[2 * LEASE_TOKEN_HEXSZ];
	const struct queue_entry *entry; /* a fair waiter's acquire: its wait (§5) */
	/* an acquire of a member whose set write was cut by a crash (protocol.md
	 * "Sets", "A set cut by a crash"): the mates seen at the oids that write
	 * moved them from, read again once this write landed (lease__set_cut_*) */
	int cut_n;
	char cut_names[LEASE_SET_MAX][LEASE_NAME_MAX + 1];
	lease_oid cut_from[LEASE_SET_MAX];
} op_ctx;

/* A fair waiter's entry into the queue, recorded in its acquire commit
 * (protocol.md §2 queued_at/queue_position, §5 "Fair waiting"). */
typedef struct queue_entry {
	int64_t queued_at;      /* store time of its first ticket, s */
	int64_t queue_position; /* its place at the first queue read, >= 1; 0 = unknown */
} queue_entry;

typedef struct decision {
	int write;
	lease_payload next;
	lease_op sop;
	lease_status_id status; /* when no write */
	int code;
	int holds_token;
	int token_changed;
	int live_write; /* sets expires_at = now + ttl */
	int64_t ttl;
	int64_t built_at;
	int replace;      /* a heartbeat that replaces the tip: written on parent */
	lease_oid parent; /* the tip's parent, when replace */
	char message[512];
} decision;

/** The status an operation of each kind answers on success (indexed by op_kind). */
extern const lease_status_id lease__rt_kind_success[];

/** 1 for the kinds that leave the lease held (acquire, heartbeat, transition, reacquire). */
int lease__rt_live_kind(op_kind k);

/** Start @p out for lease @p name on @p st: status error, no payload, its ref name. */
void lease__rt_result_init(lease_result *out, lease_store *st, const char *name);

/** Copy the read state @p s (borrowed) into @p out: presence, oid, parent, payload. */
void lease__rt_result_state(lease_result *out, const lease_ref_state *s);

/**
 * @p out fails with @p code: with @p fmt (printf) as the handle's message
 * (the runtime's own conclusion replaces what it handled below), else the
 * handle's message as it is.
 * @return @p code
 */
int lease__rt_result_fail(lease_result *out, lease_store *st, int code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/** A context for one @p kind operation on @p name (copied) with @p opts (copied
 *  with its strings), answering into @p out (borrowed). NULL: out of memory. */
op_ctx *lease__rt_ctx_new(op_kind kind, lease_result *out, lease_store *st, const char *name,
                          const lease_op_options *opts);

/** Fill @p out's message from the handle's (the operation's first error), else
 *  @p code's name (issue 26 step 2). */
void lease__rt_result_message(lease_result *out, const lease_store *st, int code);

/** What `status` says of a readable state @p s at store time @p now: absent,
 *  released, expired or live (protocol.md §4). */
lease_status_id lease__rt_read_status(lease_store *st, const lease_ref_state *s, int64_t now);

/** Validate @p c's name and options before any I/O (F08): 0 or LEASE_EINVALID (recorded). */
int lease__rt_check_inputs(op_ctx *c);

/**
 * Decide @p c's operation on the state @p s read at store time @p now
 * (protocol.md §4–§6) into @p d: a write (d->write) or an answer without one.
 * @return 0, or an error recorded in c->out (an unreadable payload, ...)
 */
int lease__rt_decide(op_ctx *c, const lease_ref_state *s, int64_t now, decision *d);

/** Answer @p c with the no-write decision @p d on the state @p s. @return d->code */
int lease__rt_finish_no_write(op_ctx *c, const lease_ref_state *s, const decision *d);

/**
 * One set operation of @p kind on @p names[0..n-1] (protocol.md "Sets";
 * set.c): every member decided, one commit per written member, one atomic
 * write through the engine (lease__engine_run_set()).
 * @return 0, or the set's error (out->code, out->message, out->blocker)
 */
/* A held member @p p of a set whose write did not reach every mate
 * (protocol.md "Sets", "A set cut by a crash"): reads the other members
 * (one batched read) and records in @p c those still at the oid the set
 * write moved them from. @return 1 (cut: @p c->cut_n > 0), 0 (not a set, or
 * whole), or a read error (< 0). */
int lease__set_cut_read(op_ctx *c, const lease_payload *p);
/* After @p c's takeover of a cut member landed: 1 when a recorded mate is
 * no longer at its old oid (the set write reached it meanwhile, or a read
 * failed: the takeover is not a success), else 0. */
int lease__set_cut_lost(op_ctx *c);
/* The answer of a takeover that lost to the set write (@p s the member as
 * read after it landed). @return LEASE_EHELD. */
int lease__set_cut_answer(op_ctx *c, const lease_ref_state *s);

int lease__set_run(op_kind kind, lease_set_result *out, lease_store *st, const char *const *names,
                   size_t n, const lease_op_options *opts);

#endif
