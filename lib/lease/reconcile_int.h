/**
 * @file reconcile_int.h (internal)
 * What the parts of reconcile share (protocol.md §6, §7): reconcile.c runs
 * the sweep; reconcile_classify.c decides a lease's anomalies;
 * reconcile_act.c does the opt-in actions (reap, prune) and records the ones
 * skipped; reconcile_history.c reads a lease's history.
 */
#ifndef REFLEASE_RECONCILE_INT_H
#define REFLEASE_RECONCILE_INT_H

#include "reflease/reconcile.h"
#include "reflease/schema.h"

#include <stddef.h>
#include <stdint.h>

/* slot-count-mismatch (protocol.md "Slots") in bounded memory. The walk
 * hands the refs over in strictly increasing name order on every store
 * (primitives.c walk_part sorts each part of the listing and skips what does
 * not sort after the last name walked), so the slots NAME@… of one NAME come
 * one after another, and a plain lease NAME before them (a prefix sorts
 * first), possibly with other names between ("db", "db-a", "db@1of2"). Kept:
 * the plain names that are prefixes of the name walked — a stack, each entry
 * a prefix of the next, so at most LEASE_NAME_MAX deep and all of them
 * prefixes of the last one pushed — and, for the NAME whose slots are being
 * walked, the first slot not released and the first not released of another
 * count. Nothing grows with the namespace. */
typedef struct slot_walk {
	char plain[LEASE_NAME_MAX + 1];      /* the last plain name pushed */
	size_t len[LEASE_NAME_MAX];          /* the stack: lengths of prefixes of plain */
	unsigned char unrel[LEASE_NAME_MAX]; /* ... each one not released */
	size_t depth;
	char base[LEASE_NAME_MAX + 1];  /* the NAME of the slots walked ("" none yet) */
	char first[LEASE_NAME_MAX + 1]; /* its first slot not released ("" none) */
	int64_t first_n;
	char other[LEASE_NAME_MAX + 1]; /* its first not released of a count != first_n */
	int64_t other_n;
} slot_walk;

/* ---- classification (reconcile_classify.c) ---- */

/** Add anomaly @p id to @p e (each id at most once); NULL when already there or out of memory. */
lease_anomaly *lease__rec_add_anomaly(lease_reconcile_entry *e, lease_anomaly_id id,
                                      lease_severity sev, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/** Whether @p e carries anomaly @p id. */
int lease__rec_has_anomaly(const lease_reconcile_entry *e, lease_anomaly_id id);
/** Heartbeat time of @p p (protocol.md §6), exact or approximated with @p next's TTL. */
void lease__rec_hb_time(int64_t *t, lease_hb_method *m, int64_t *assumed, const lease_payload *p,
                        const lease_payload *next, int64_t default_ttl);
/** Whether @p tip (written by @p op) is a heartbeat of @p parent's tenure (§6). */
int lease__rec_is_tenure_heartbeat(const lease_payload *tip, lease_op op,
                                   const lease_payload *parent);
/** Whether @p tip (written by @p op) names the heartbeat it replaced (§2). */
int lease__rec_replaced_heartbeat(const lease_payload *tip, lease_op op);
/** slot-count-mismatch of @p e against the refs walked before it (before its action). */
void lease__rec_slot_walk_check(slot_walk *w, lease_reconcile_entry *e, const char *ns);
/** After @p e's action: remember it for the refs after it. */
void lease__rec_slot_walk_note(slot_walk *w, const lease_reconcile_entry *e);

/* ---- actions (reconcile_act.c) ---- */

/** An action due but not done: @p code LEASE_ECAS when a concurrent write won. */
void lease__rec_skip(lease_reconcile_report *r, lease_reconcile_entry *e, int code,
                     const char *kind, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/** Reap expired entry @p e through the write-and-settle engine (§7). */
void lease__rec_reap(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st,
                     const lease_reconcile_options *o);
/** Prune released entry @p e: archive ref, then delete (§7). */
void lease__rec_prune(lease_reconcile_report *r, lease_reconcile_entry *e, lease_store *st);

#endif
