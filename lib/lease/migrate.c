/*
 * Payload migrations (protocol.md §8): one namespace sweep; each lease older
 * than the target is rewritten by the registered steps of migrations/ and
 * written by CAS from the oid read, settling lost or unverified writes by
 * re-reading (§5 "Settling an outcome").
 */
#include "reflease/migrate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lease/commit.h"
#include "lease/door.h"
#include "lease/migration.h"
#include "reflease/version.h"
#include "store/frontend.h"
#include "util/util.h"

/* Longest chain of steps one payload may need. */
#define CHAIN_MAX 16
/* Writes per lease: the first and LEASE_MIGRATE_MAX_RETRIES retries. */
#define ATTEMPTS_MAX (1 + LEASE_MIGRATE_MAX_RETRIES)

static const char *const status_names[LEASE_MIGRATE_STATUS_COUNT] = {
        "would_migrate", "migrated", "current", "skipped_newer", "skipped_malformed", "conflict",
};

const char *lease_migrate_status_name(lease_migrate_status s)
{
	return (unsigned)s < LEASE_MIGRATE_STATUS_COUNT ? status_names[s] : "unknown";
}

void lease_migrate_report_clear(lease_migrate_report *r)
{
	if (!r)
		return;
	free(r->entries);
	memset(r, 0, sizeof(*r));
}

int lease_migrate_target_validate(const char *version, char *err, size_t errlen)
{
	char valid[256] = "";
	size_t i, used = 0;
	int ma = 0, mi = 0, pa = 0;

	for (i = 0; i < lease__migrations_count(); i++) {
		const lease_migration *m = lease__migration_at(i);
		if (m->to_major > SDLC_VERSION_MAJOR ||
		    (m->to_major == SDLC_VERSION_MAJOR && m->to_minor > SDLC_VERSION_MINOR))
			continue;
		if (used < sizeof(valid))
			used += (size_t)snprintf(valid + used, sizeof(valid) - used, "%s%s",
			                         used ? ", " : "", m->to);
	}
	if (!version || lease__migration_version_parse(version, &ma, &mi, &pa) < 0) {
		lease__error_set(err, errlen,
		                 "'%s' is not a version MAJOR.MINOR.PATCH (valid targets: %s)",
		                 version ? version : "", valid);
		return LEASE_EINVALID;
	}
	for (i = 0; i < lease__migrations_count(); i++) {
		const lease_migration *m = lease__migration_at(i);
		if (m->to_major == ma && m->to_minor == mi && m->to_patch == pa &&
		    (ma < SDLC_VERSION_MAJOR ||
		     (ma == SDLC_VERSION_MAJOR && mi <= SDLC_VERSION_MINOR)))
			return 0;
	}
	lease__error_set(err, errlen,
	                 "'%s' is not the target of a registered migration this build can write "
	                 "(valid targets: %s)",
	                 version, valid);
	return LEASE_EINVALID;
}

/* One run's settings and, per lease, the commits written. */
typedef struct migrate_run {
	lease_store *st;
	const lease_migrate_options *o;
	int to_major, to_minor;
	char target[32];
	int64_t assumed_ttl;
} migrate_run;

static void entry_message(lease_migrate_entry *e, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void entry_message(lease_migrate_entry *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/*
 * The sdlc_version a payload claims, for reporting a payload this build
 * cannot read (another major): "" unless it is a plain MAJOR.MINOR.PATCH.
 */
static void claimed_version(char *out, size_t outlen, const lease_commit *c)
{
	const char *body = c->message ? strstr(c->message, "\n\n") : NULL;
	json_t *root = NULL, *v;
	int ma = 0, mi = 0, pa = 0;

	out[0] = '\0';
	if (!body)
		return;
	root = json_loads(body + 2, JSON_REJECT_DUPLICATES, NULL);
	v = root ? json_object_get(root, "sdlc_version") : NULL;
	if (json_is_string(v) && strlen(json_string_value(v)) < outlen &&
	    lease__migration_version_parse(json_string_value(v), &ma, &mi, &pa) == 0)
		snprintf(out, outlen, "%s", json_string_value(v));
	json_decref(root);
}

/*
 * Decide what a read state calls for, without writing: sets e->status to
 * current, skipped_* or would_migrate (with the steps in @p steps).
 */
static void classify(lease_migrate_entry *e, const migrate_run *run, const lease_ref_state *s,
                     const lease_migration **steps, size_t *nsteps)
{
	const lease_payload *p = &s->payload;
	int rc;

	*nsteps = 0;
	e->from[0] = e->to[0] = '\0';
	e->method = NULL;
	e->ttl_seconds = -1;
	e->message[0] = '\0';
	e->old_oid = s->oid;
	if (!s->commit.is_commit) {
		e->status = LEASE_MIGRATE_SKIPPED_MALFORMED;
		entry_message(e, "%s", "the ref points at an object that is not a commit");
		return;
	}
	if (s->payload_rc == LEASE_EVERSION) {
		/* another major: 0.x is no schema reflease ever wrote (malformed),
		 * anything above 1 is a newer schema */
		int ma = SDLC_VERSION_MAJOR + 1, mi = 0, pa = 0;

		claimed_version(e->from, sizeof(e->from), &s->commit);
		if (e->from[0])
			lease__migration_version_parse(e->from, &ma, &mi, &pa);
		e->status = ma < SDLC_VERSION_MAJOR ? LEASE_MIGRATE_SKIPPED_MALFORMED
		                                    : LEASE_MIGRATE_SKIPPED_NEWER;
		entry_message(e, "%s", s->payload_error);
		return;
	}
	if (s->payload_rc != 0) {
		e->status = LEASE_MIGRATE_SKIPPED_MALFORMED;
		entry_message(e, "%s",
		              s->payload_error[0] ? s->payload_error : "malformed payload");
		return;
	}
	snprintf(e->from, sizeof(e->from), "%s", p->sdlc_version);
	rc = lease__migrations_chain(steps, CHAIN_MAX, nsteps, p->version_major, p->version_minor,
	                             run->to_major, run->to_minor);
	if (rc == LEASE_EVERSION) {
		e->status = LEASE_MIGRATE_SKIPPED_NEWER;
		snprintf(e->message, sizeof(e->message),
		         "payload written by a newer schema (%s) than the target %s",
		         p->sdlc_version, run->target);
	} else if (rc < 0) {
		e->status = LEASE_MIGRATE_SKIPPED_MALFORMED;
		snprintf(e->message, sizeof(e->message), "no registered migration from %s to %s",
		         p->sdlc_version, run->target);
	} else if (*nsteps == 0) {
		e->status = LEASE_MIGRATE_CURRENT;
		snprintf(e->to, sizeof(e->to), "%s", p->sdlc_version);
	} else {
		e->status = LEASE_MIGRATE_WOULD_MIGRATE;
		snprintf(e->to, sizeof(e->to), "%s", run->target);
	}
}

/* Run the chained steps over a copy of the read payload and validate it. */
static int build(lease_payload *out, lease_migrate_entry *e, const migrate_run *run,
                 const lease_ref_state *s, const lease_migration **steps, size_t nsteps)
{
	lease_migration_input in;
	char err[256] = "";
	size_t k;
	int rc;

	memset(&in, 0, sizeof(in));
	in.has_commit_time = s->commit.time > 0;
	in.commit_time = s->commit.time;
	in.assumed_ttl = run->assumed_ttl;
	in.ttl_min = lease_store_ttl_min(run->st);
	in.ttl_max = lease_store_ttl_max(run->st);
	in.random = lease_store_random(run->st);
	*out = s->payload;
	for (k = 0; k < nsteps; k++) {
		const char *m = NULL;

		if ((rc = steps[k]->apply(out, &m, &in, err, sizeof(err))) < 0) {
			entry_message(e, "%s", err[0] ? err : lease_error_id(rc));
			return rc;
		}
		if (m)
			e->method = m;
	}
	if ((rc = lease_payload_validate(out, err, sizeof(err))) < 0) {
		snprintf(e->message, sizeof(e->message), "migrated payload invalid: %.200s", err);
		return rc;
	}
	e->ttl_seconds = out->has_ttl ? out->ttl_seconds : -1;
	return 0;
}

/*
 * The migration commit's message: summary op `migrate`, the canonical payload
 * of @p next, plus every field of the read payload this build does not know,
 * kept as read — a migration drops nothing (protocol.md §8). The result is
 * parsed back before it is used.
 */
static int build_message(char **out, const lease_payload *next, const char *read_message, char *err,
                         size_t errlen)
{
	const char *body = read_message ? strstr(read_message, "\n\n") : NULL;
	const char *key, *sep;
	char *msg = NULL, *json = NULL, *merged = NULL;
	json_t *canon = NULL, *orig = NULL, *v;
	lease_payload check;
	lease_op op = LEASE_OP_UNKNOWN;
	size_t cap, extra = 0;
	int rc;

	*out = NULL;
	if ((rc = lease_message_build(&msg, next, LEASE_OP_MIGRATE)) < 0)
		goto done;
	sep = strstr(msg, "\n\n");
	orig = body ? json_loads(body + 2, JSON_REJECT_DUPLICATES, NULL) : NULL;
	canon = sep ? json_loads(sep + 2, 0, NULL) : NULL;
	if (!canon) {
		rc = LEASE_EINTERNAL;
		goto done;
	}
	/* lease_message_build() writes SDLC_VERSION: a run with an older
	 * --to states the version its steps reached */
	if (strcmp(next->sdlc_version, SDLC_VERSION) != 0) {
		if (json_object_set_new(canon, "sdlc_version", json_string(next->sdlc_version)) <
		    0) {
			rc = LEASE_ENOMEM;
			goto done;
		}
		extra++;
	}
	if (json_is_object(orig)) {
		json_object_foreach(orig, key, v)
		{
			if (!json_object_get(canon, key)) {
				json_object_set(canon, key, v);
				extra++;
			}
		}
	}
	if (extra) {
		if (!(json = json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS))) {
			rc = LEASE_ENOMEM;
			goto done;
		}
		cap = (size_t)(sep - msg) + strlen(json) + 4;
		if (!(merged = malloc(cap))) {
			rc = LEASE_ENOMEM;
			goto done;
		}
		snprintf(merged, cap, "%.*s\n\n%s\n", (int)(sep - msg), msg, json);
		free(msg);
		msg = merged;
		merged = NULL;
	}
	if ((rc = lease_message_parse(&check, &op, msg, strlen(msg), next->name, err, errlen)) <
	            0 ||
	    op != LEASE_OP_MIGRATE) {
		rc = rc < 0 ? rc : LEASE_EINTERNAL;
		goto done;
	}
	*out = msg;
	msg = NULL;
	rc = 0;
done:
	free(merged);
	free(json);
	free(msg);
	json_decref(canon);
	json_decref(orig);
	return rc;
}

/* Messages may quote payload text: keep them on one line, without control
 * characters, so no output format can be broken by them (cli.md). */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			*s = ' ';
}

/* ---- one lease through the write-and-settle engine (commit.c) ------------- */

typedef struct migrate_op {
	migrate_run *run;
	lease_migrate_entry *e;
	char last_err[512];
} migrate_op;

static void not_migrated(lease_migrate_entry *e, lease_migrate_status status)
{
	e->status = status;
	e->to[0] = '\0';
	e->method = NULL;
}

/* Classify r->s and, to apply, plan its migrated commit (protocol.md §8);
 * the before_write hook runs once the write is decided, before its CAS. */
static lease_step mg_plan(void *ctx, const lease_round *r, lease_plan *pl)
{
	migrate_op *m = ctx;
	migrate_run *run = m->run;
	lease_migrate_entry *e = m->e;
	const lease_ref_state *s = r->s;
	const lease_migrate_options *o = run->o;
	const lease_migration *steps[CHAIN_MAX];
	size_t nsteps;
	char berr[256] = "";
	int rc;

	if (!s->present) {
		not_migrated(e, LEASE_MIGRATE_CONFLICT);
		entry_message(e, "%s", "the lease was deleted while it was being migrated");
		return lease_step_done(0);
	}
	classify(e, run, s, steps, &nsteps);
	if (e->status != LEASE_MIGRATE_WOULD_MIGRATE)
		return lease_step_done(0);
	if (build(&pl->p, e, run, s, steps, nsteps) < 0) {
		not_migrated(e, LEASE_MIGRATE_SKIPPED_MALFORMED);
		return lease_step_done(0);
	}
	if ((rc = build_message(&pl->message, &pl->p, s->commit.message, berr, sizeof(berr))) < 0) {
		if (rc != LEASE_EPAYLOAD)
			return lease_step_done(rc);
		/* e.g. unknown fields that no longer fit in 16 KiB */
		not_migrated(e, LEASE_MIGRATE_SKIPPED_MALFORMED);
		entry_message(e, "cannot migrate: %.200s", berr);
		return lease_step_done(0);
	}
	if (!o->apply || e->attempts >= ATTEMPTS_MAX) {
		free(pl->message);
		pl->message = NULL;
		if (o->apply) {
			e->status = LEASE_MIGRATE_CONFLICT;
			snprintf(e->message, sizeof(e->message),
			         "not migrated after %d attempts; last: %.200s", e->attempts,
			         m->last_err);
		}
		return lease_step_done(0);
	}
	e->attempts++;
	pl->op = LEASE_OP_MIGRATE;
	if (o->before_write &&
	    (rc = o->before_write(r->st, e->name, &s->oid, e->attempts, o->hook_payload)) != 0) {
		free(pl->message);
		pl->message = NULL;
		entry_message(e, "%s", "stopped by the before_write hook");
		return lease_step_done(rc < 0 ? rc : LEASE_EINTERNAL);
	}
	return lease_step_write();
}

static lease_step mg_landed(void *ctx, const lease_round *r, const lease_written *w)
{
	migrate_op *m = ctx;

	(void)r;
	m->e->status = LEASE_MIGRATE_MIGRATED;
	m->e->has_new_oid = 1;
	m->e->new_oid = w->oid;
	snprintf(m->e->to, sizeof(m->e->to), "%s", m->run->target);
	return lease_step_done(0);
}

/* A lost CAS is read again (the next plan counts the attempt); a hard error
 * ends the run; a lease that never settled is a conflict. */
static lease_step mg_failed(void *ctx, const lease_round *r, lease_engine_failure why, int rc,
                            const char *msg)
{
	migrate_op *m = ctx;

	if (why == LEASE_FAIL_LOST) {
		snprintf(m->last_err, sizeof(m->last_err), "%s", lease_store_last_error(r->st));
		lease__store_log(r->st, LEASE_LOG_INFO, "migrate %s: attempt %d: %s; re-reading",
		                 m->e->name, m->e->attempts, m->last_err);
		return lease_step_settle();
	}
	if (why == LEASE_FAIL_ERROR) {
		if (msg)
			entry_message(m->e, "%s", msg);
		return lease_step_done(rc);
	}
	m->e->status = LEASE_MIGRATE_CONFLICT;
	snprintf(m->e->message, sizeof(m->e->message),
	         "not migrated after %d attempts; last: %.200s", m->e->attempts,
	         msg ? msg : m->last_err);
	return lease_step_done(0);
}

static const lease_engine_ops mg_ops = {mg_plan, mg_landed, mg_failed};

/*
 * Migrate one lease from its read state @p first: plan, or write and settle
 * (protocol.md §5, §8). Returns 0 with e->status decided, or a hard error
 * (a transport failure other than a lost or unverified CAS).
 */
static int migrate_one(migrate_run *run, lease_migrate_entry *e, const lease_ref_state *first)
{
	migrate_op m;
	int rc;

	snprintf(e->name, sizeof(e->name), "%s", first->name);
	memset(&m, 0, sizeof(m));
	m.run = run;
	m.e = e;
	/* paced: one operation of a burst (issue 15) */
	rc = lease__engine_run(run->st, e->name, &mg_ops, &m, first, 1);
	if (rc < 0 && !e->message[0])
		entry_message(e, "%s", lease_store_last_error(run->st));
	if (rc < 0 && e->status == LEASE_MIGRATE_WOULD_MIGRATE)
		e->status = LEASE_MIGRATE_CONFLICT;
	one_line(e->message);
	return rc;
}

int lease_migrate(lease_migrate_report *out, lease_store *st, const lease_migrate_options *opts)
{
	lease_migrate_options defaults = LEASE_MIGRATE_OPTIONS_INIT;
	lease_namespace ns;
	migrate_run run;
	char err[256] = "";
	size_t i;
	int rc = 0, patch = 0;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	memset(out, 0, sizeof(*out));
	memset(&ns, 0, sizeof(ns));
	memset(&run, 0, sizeof(run));
	if (!opts)
		opts = &defaults;
	if (opts->version != LEASE_MIGRATE_OPTIONS_VERSION)
		return lease__store_set_error(st, LEASE_EINVALID,
		                              "migrate options of an unsupported version");
	run.st = st;
	run.o = opts;
	snprintf(run.target, sizeof(run.target), "%s", opts->to ? opts->to : SDLC_VERSION);
	snprintf(out->target, sizeof(out->target), "%s", run.target);
	out->applied = opts->apply ? 1 : 0;
	if ((rc = lease__migrations_check(err, sizeof(err))) < 0)
		return lease__store_set_error(st, rc, "%s", err);
	if ((rc = lease_migrate_target_validate(run.target, err, sizeof(err))) < 0)
		return lease__store_set_error(st, rc, "--to: %s", err);
	if (lease__migration_version_parse(run.target, &run.to_major, &run.to_minor, &patch) < 0)
		return lease__store_set_error(st, LEASE_EINVALID, "--to: invalid version");
	run.assumed_ttl = opts->assumed_ttl ? opts->assumed_ttl : LEASE_TTL_DEFAULT;
	if (run.assumed_ttl < lease_store_ttl_min(st) || run.assumed_ttl > lease_store_ttl_max(st))
		return lease__store_set_error(
		        st, LEASE_EINVALID,
		        "--assumed-ttl: %lld is outside this store's TTL bounds %d..%d",
		        (long long)run.assumed_ttl, lease_store_ttl_min(st),
		        lease_store_ttl_max(st));

	if ((rc = lease_fetch_namespace(&ns, st)) < 0)
		return rc;
	out->invalid_names = ns.invalid_count;
	if (ns.count && !(out->entries = calloc(ns.count, sizeof(*out->entries)))) {
		lease_namespace_clear(&ns);
		return lease__store_set_error(st, LEASE_ENOMEM, "out of memory");
	}
	out->paced_ms = -lease__store_paced_ms(st);
	lease__store_op_begin(st, 0); /* each lease's operation: lease__store_pace() */
	for (i = 0; i < ns.count; i++) {
		lease_migrate_entry *e = &out->entries[i];

		rc = migrate_one(&run, e, &ns.leases[i]);
		out->count++;
		out->counts[e->status]++;
		if (rc < 0)
			break;
	}
	lease__store_op_end(st);
	out->paced_ms += lease__store_paced_ms(st);
	lease_namespace_clear(&ns);
	return rc < 0 ? rc : 0;
}
