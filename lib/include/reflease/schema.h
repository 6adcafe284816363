/**
 * @file schema.h
 * Lease names, namespaces, the payload (schema 1.1.0) and its commit message:
 * validation, parsing and canonical emission (protocol.md §1, §2).
 */
#ifndef REFLEASE_SCHEMA_H
#define REFLEASE_SCHEMA_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Longest lease name, bytes (protocol.md §1). */
#define LEASE_NAME_MAX 100
/** Longest namespace, bytes (protocol.md §1). */
#define LEASE_NS_MAX 32
/** Longest owner or host, bytes (protocol.md §2). */
#define LEASE_IDENT_MAX 200
/** Largest commit message, bytes; a longer one is malformed (protocol.md §2). */
#define LEASE_MESSAGE_MAX 16384
/** Deepest JSON nesting accepted in a payload. */
#define LEASE_JSON_DEPTH_MAX 8
/** Token length, hex characters (128 bits). */
#define LEASE_TOKEN_HEXSZ 32
/** Nonce length, hex characters (64 bits). */
#define LEASE_NONCE_HEXSZ 16
/** Most members a set names (protocol.md "Sets"; LEASE_SET_MAX). */
#define LEASE_PAYLOAD_SET_MAX 16
/** Length of a `YYYY-MM-DDTHH:MM:SSZ` timestamp, characters. */
#define LEASE_TIME_STRSZ 20
/** Lowest and highest ttl_seconds a reader accepts for a live phase (protocol.md §2). */
#define LEASE_TTL_READ_MIN 1
#define LEASE_TTL_READ_MAX 86400
/** Default TTL, seconds (protocol.md §6). */
#define LEASE_TTL_DEFAULT 300
/**
 * Default TTL on github:, seconds (protocol.md §6, issue 39): renewed every
 * LEASE_RENEW_PACE_BUDGETED (375 s) a held lease costs 19.2 content-creating
 * requests an hour; a runner that vanishes frees it 455 s later (+ 5 s skew).
 */
#define LEASE_TTL_DEFAULT_GITHUB 450

/** Lifecycle phase (protocol.md §2). */
typedef enum lease_phase {
	LEASE_PHASE_NONE = 0, /**< not a phase: "unset" in options */
	LEASE_PHASE_CLAIMED,
	LEASE_PHASE_WORKING,
	LEASE_PHASE_REVIEW,
	LEASE_PHASE_RELEASED
} lease_phase;

/** The phase's wire name ("claimed", ...); "none" for LEASE_PHASE_NONE. */
REFLEASE_EXTERN const char *lease_phase_name(lease_phase phase);
/**
 * Parse a phase name ("claimed", "working", "review", "released"; exact,
 * lowercase). "none" is not a phase.
 * @return 0, or LEASE_EINVALID (@p out untouched)
 */
REFLEASE_EXTERN int lease_phase_parse(lease_phase *out, const char *s);

/**
 * One lease state, as carried by a payload commit. Fixed-size fields: the
 * struct owns no heap memory and may be copied by value.
 */
typedef struct lease_payload {
	char sdlc_version[32]; /**< as read, e.g. "1.0.0"; writers set SDLC_VERSION */
	int version_major;     /**< parsed from sdlc_version */
	int version_minor;
	int version_patch;
	char name[LEASE_NAME_MAX + 1];
	char owner[LEASE_IDENT_MAX + 1];
	char host[LEASE_IDENT_MAX + 1];
	lease_phase phase;
	char lease_token[LEASE_TOKEN_HEXSZ + 1];
	int64_t transitions; /**< >= 0 */
	int64_t acquired_at; /**< seconds since the epoch */
	int64_t expires_at;  /**< seconds since the epoch */
	char nonce[LEASE_NONCE_HEXSZ + 1];
	int has_ttl;         /**< 0 for a pre-bump (1.0.x) payload without ttl_seconds */
	int64_t ttl_seconds; /**< valid when has_ttl */
	/** 1.2.0+: set on a heartbeat commit only (protocol.md §2 "Heartbeats
	 *  replace heartbeats"); 0 when absent (any other commit, or older). */
	int has_heartbeats;
	int64_t heartbeats; /**< heartbeats of this tenure's run the commit stands for, >= 1 */
	int has_previous_heartbeat; /**< 1.2.0+: this heartbeat replaced the heartbeat before it */
	int64_t previous_heartbeat_at; /**< that heartbeat's time (its expires_at − ttl_seconds), s
	                                */
	/** 1.2.0+, optional: set on the acquire commit of a fair waiter only
	 *  (protocol.md §2, §5 "Fair waiting"); 0 when absent (any other commit,
	 *  a plain acquire, or an older writer). */
	int has_queued_at;
	int64_t queued_at;      /**< store time the waiter took its first ticket, s (not after the
	                             commit's write time, expires_at − ttl_seconds) */
	int64_t queue_position; /**< its place in the queue at that time (1 = first), >= 1;
	                             0 = not recorded (only with has_queued_at) */
	/** 1.2.0+, optional (issue 40, B65): set on a live commit written by a
	 *  set write of 2 or more leases only (protocol.md §2, "Sets"): the
	 *  write's id and every member with the oid the write moves it from; 0
	 *  when absent. What a reader may conclude from it: protocol.md "Sets",
	 *  "A set cut by a crash". */
	int has_set;
	char set_write[LEASE_NONCE_HEXSZ + 1]; /**< the set write's id: 16 lowercase hex */
	int set_count;                         /**< members named, 2..LEASE_PAYLOAD_SET_MAX */
	char set_members[LEASE_PAYLOAD_SET_MAX]
	                [LEASE_NAME_MAX + 1];      /**< names, this one among them */
	lease_oid set_from[LEASE_PAYLOAD_SET_MAX]; /**< each member's oid before the write (zero:
	                                              it was absent) */
} lease_payload;

/** Summary-line operation that wrote a commit (protocol.md §2). */
typedef enum lease_op {
	LEASE_OP_UNKNOWN = 0,
	LEASE_OP_ACQUIRE,
	LEASE_OP_HEARTBEAT,
	LEASE_OP_TRANSITION,
	LEASE_OP_REACQUIRE,
	LEASE_OP_RELEASE,
	LEASE_OP_BREAK,
	LEASE_OP_REAP,
	LEASE_OP_MIGRATE
} lease_op;

/** The op's wire name ("acquire", ...); "unknown" for LEASE_OP_UNKNOWN. */
REFLEASE_EXTERN const char *lease_op_name(lease_op op);

/**
 * Validate a lease name (protocol.md §1): 1–100 bytes of [A-Za-z0-9._-],
 * first byte alphanumeric, no "..", not ending in "." or ".lock", no "/".
 * No I/O.
 * @param err  receives a message naming the broken rule (may be NULL)
 * @return 0, or LEASE_EINVALID
 */
REFLEASE_EXTERN int lease_name_validate(const char *name, char *err, size_t errlen);

/** Most slots an N-slot lease may have (protocol.md "Slots"). */
#define LEASE_SLOTS_MAX 64

/**
 * Build the lease name of slot @p index (1-based) of the N-slot lease
 * @p base with @p slots slots: "<base>@<index>of<slots>" (protocol.md
 * "Slots"). '@' is no byte of a plain name, so no slot name is a plain
 * name, and a slot name has no '/', so no ref of one is a directory of
 * another (no D/F conflict). The whole name must fit LEASE_NAME_MAX bytes.
 * @param out  receives the name (LEASE_NAME_MAX + 1 bytes)
 * @return 0, or LEASE_EINVALID (bad base, 1 <= index <= slots <=
 *         LEASE_SLOTS_MAX broken, or too long) with the rule in @p err
 */
REFLEASE_EXTERN int lease_slot_name(char out[LEASE_NAME_MAX + 1], const char *base, int64_t index,
                                    int64_t slots, char *err, size_t errlen);

/**
 * Split a slot name "<base>@<index>of<slots>" (protocol.md "Slots").
 * @param base  receives the base name (LEASE_NAME_MAX + 1 bytes), may be NULL
 * @param index,slots  receive the numbers, may be NULL
 * @return 1 when @p name is a valid slot name, 0 when it is not one (a plain
 *         name included), LEASE_EINVALID with the rule in @p err when it has
 *         an '@' but breaks the slot form
 */
REFLEASE_EXTERN int lease_slot_name_parse(const char *name, char base[LEASE_NAME_MAX + 1],
                                          int64_t *index, int64_t *slots, char *err, size_t errlen);

/**
 * Validate the name of a lease ref: a plain name (lease_name_validate()) or
 * a slot name (lease_slot_name_parse()). The payload parser, the primitives
 * and lease_refname() take both. No I/O.
 * @return 0, or LEASE_EINVALID with the rule in @p err
 */
REFLEASE_EXTERN int lease_ref_name_validate(const char *name, char *err, size_t errlen);

/**
 * Validate a namespace (protocol.md §1): [a-z][a-z0-9-]{0,31}, not ending in
 * "-archive" or "-queue", not a reserved word (heads, tags, ...). No I/O.
 * @return 0, or LEASE_EINVALID with the rule in @p err
 */
REFLEASE_EXTERN int lease_namespace_validate(const char *ns, char *err, size_t errlen);

/**
 * Build "refs/<ns>/<name>" into @p out after validating both parts (the
 * name by lease_ref_name_validate(): plain or slot name), so a
 * crafted name can never address a ref outside refs/<ns>/ (protocol.md §1).
 * @param ns  namespace; NULL means the default "leases"
 * @return 0, LEASE_EINVALID (bad name/namespace; @p out untouched), or
 *         LEASE_ENOMEM (@p outlen too small; @p out set to "")
 */
REFLEASE_EXTERN int lease_refname(char *out, size_t outlen, const char *ns, const char *name,
                                  char *err, size_t errlen);

/**
 * Format @p t (seconds since the epoch, UTC) as YYYY-MM-DDTHH:MM:SSZ into
 * @p out (LEASE_TIME_STRSZ + 1 bytes). Values outside years 0000-9999 are
 * clamped to that range (lease_payload_validate() refuses them).
 */
REFLEASE_EXTERN void lease_time_format(char out[LEASE_TIME_STRSZ + 1], int64_t t);
/**
 * Parse a strict YYYY-MM-DDTHH:MM:SSZ timestamp: exactly 20 characters, UTC
 * ("Z" only), calendar-checked (leap years; no Feb 30, no hour 24, no leap
 * second 60), no fractions or offsets (protocol.md §2).
 * @param out  seconds since the epoch; may be NULL (check only)
 * @return 0, or LEASE_EINVALID
 */
REFLEASE_EXTERN int lease_time_parse(int64_t *out, const char *s);

/**
 * Parse and validate a payload JSON document (protocol.md §2): every field of
 * its version present and well-formed, duplicated keys rejected, nesting
 * bounded, unknown fields ignored. A 1.0.x payload without ttl_seconds is
 * valid (has_ttl = 0; in 1.0.x, ttl_seconds is an unknown field and is
 * ignored); a 1.1+ payload must carry it. A newer minor parses (check
 * lease_payload_writable()); a major other than 1 is LEASE_EVERSION (checked
 * first, before any other field). Chronology is never a schema error. Bounds:
 * @p len <= LEASE_MESSAGE_MAX bytes, nesting <= LEASE_JSON_DEPTH_MAX (checked
 * before the text reaches jansson). A released payload with ttl_seconds in
 * 1-86400 is accepted by a reader (a writer emits 0).
 * @param json  the document, @p len bytes, need not be NUL-terminated
 * @param err   receives a message naming the field and the rule, e.g.
 *              "lease_token: must be 32 lowercase hex characters" (may be NULL)
 * @return 0, LEASE_EPAYLOAD (malformed), or LEASE_EVERSION (major != 1);
 *         on failure @p out is untouched
 */
REFLEASE_EXTERN int lease_payload_parse(lease_payload *out, const char *json, size_t len, char *err,
                                        size_t errlen);

/**
 * Check a payload before it is written (F20: every payload is validated by the
 * project's own schema before it is written). A writer emits only 1.1.0: the
 * sdlc_version/version_* members are not looked at (lease_payload_emit()
 * always writes SDLC_VERSION; call lease_payload_writable() on the payload
 * being replaced), has_ttl must be 1, ttl_seconds 1-86400 for a live phase
 * and exactly 0 for released; timestamps within years 0000-9999.
 * @return 0, or LEASE_EPAYLOAD with the reason in @p err
 */
REFLEASE_EXTERN int lease_payload_validate(const lease_payload *p, char *err, size_t errlen);

/**
 * Check that @p token has a lease token's form: LEASE_TOKEN_HEXSZ (32)
 * lowercase hex digits (protocol.md §2); a token of another form is never
 * current. @p err (may be NULL) receives the reason.
 * @return 0 or LEASE_EINVALID
 */
REFLEASE_EXTERN int lease_token_validate(const char *token, char *err, size_t errlen);

/**
 * Whether a writer of SDLC_VERSION may replace @p p (protocol.md §2): major 1
 * and minor not newer than ours.
 * @return 0, or LEASE_EVERSION ("payload written by a newer schema")
 */
REFLEASE_EXTERN int lease_payload_writable(const lease_payload *p, char *err, size_t errlen);

/**
 * Emit the canonical JSON of @p p: compact, sorted keys, every 1.1.0 field,
 * "sdlc_version" always SDLC_VERSION. @p p is checked with
 * lease_payload_validate() first (call it yourself for the reason text).
 * @param out  receives a NUL-terminated string, the caller's to free()
 * @return 0, LEASE_EPAYLOAD (p invalid), LEASE_EINVALID (@p out NULL), or LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_payload_emit(char **out, const lease_payload *p);

/**
 * Build a full commit message: "<name>: <op> <phase> by <owner> on <host>",
 * a blank line, the canonical payload JSON, newline (protocol.md §2).
 * @param out  receives the message, the caller's to free()
 * @param op   the operation writing it; LEASE_OP_UNKNOWN is refused
 * @return 0, LEASE_EPAYLOAD (p invalid), LEASE_EINVALID (unknown op), or LEASE_ENOMEM
 */
REFLEASE_EXTERN int lease_message_build(char **out, const lease_payload *p, lease_op op);

/**
 * Parse a commit message: size bound (16 KiB), valid UTF-8 (no NUL) throughout,
 * a non-empty summary line, a blank line, then the payload = everything after
 * the first blank line (trailing newlines are fine). When @p expected_name is
 * non-NULL the payload name must equal it (else LEASE_EPAYLOAD, error text
 * starting "name mismatch").
 * @param op_out  receives the summary's op, read from "<name>: <op> ..."
 *                (LEASE_OP_UNKNOWN for foreign or unknown summaries, never an
 *                error); may be NULL
 * @return 0, LEASE_EPAYLOAD, or LEASE_EVERSION; on failure @p out is untouched
 */
REFLEASE_EXTERN int lease_message_parse(lease_payload *out, lease_op *op_out, const char *message,
                                        size_t len, const char *expected_name, char *err,
                                        size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
