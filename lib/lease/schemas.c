/* Lease names, namespaces, timestamps, the payload (schema 1.2.0) and its
 * commit message (reflease/schema.h; protocol.md §1, §2).
 *
 * Every error text names the field (or part) and the rule broken, e.g.
 * "lease_token: must be 32 lowercase hex characters". */
#include "reflease/schema.h"

#include "lease/policy.h"
#include "lease/schemas.h"
#include "reflease/version.h"
#include "util/util.h"

#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- errors */

/* ---------------------------------------------------------------- phases and ops */

static const char *const phase_names[] = {"none", "claimed", "working", "review", "released"};

const char *lease_phase_name(lease_phase phase)
{
	if ((int)phase < 0 || (size_t)phase >= sizeof(phase_names) / sizeof(phase_names[0]))
		return "none";
	return phase_names[phase];
}

int lease_phase_parse(lease_phase *out, const char *s)
{
	int i;

	if (!s)
		return LEASE_EINVALID;
	for (i = LEASE_PHASE_CLAIMED; i <= LEASE_PHASE_RELEASED; i++) {
		if (strcmp(s, phase_names[i]) == 0) {
			if (out)
				*out = (lease_phase)i;
			return 0;
		}
	}
	return LEASE_EINVALID;
}

static const char *const op_names[] = {"unknown", "acquire", "heartbeat", "transition", "reacquire",
                                       "release", "break",   "reap",      "migrate"};

const char *lease_op_name(lease_op op)
{
	if ((int)op < 0 || (size_t)op >= sizeof(op_names) / sizeof(op_names[0]))
		return "unknown";
	return op_names[op];
}

static lease_op op_from_word(const char *s, size_t n)
{
	int i;

	for (i = LEASE_OP_ACQUIRE; i <= LEASE_OP_MIGRATE; i++)
		if (strlen(op_names[i]) == n && memcmp(s, op_names[i], n) == 0)
			return (lease_op)i;
	return LEASE_OP_UNKNOWN;
}

/* ---------------------------------------------------------------- names (§1) */

static int is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

int lease_name_validate(const char *name, char *err, size_t errlen)
{
	size_t n, i;

	if (!name || !*name) {
		lease__error_set(err, errlen, "name: must not be empty (1-%d bytes)",
		                 LEASE_NAME_MAX);
		return LEASE_EINVALID;
	}
	n = strlen(name);
	if (n > LEASE_NAME_MAX) {
		lease__error_set(err, errlen, "name: must be at most %d bytes (got %zu)",
		                 LEASE_NAME_MAX, n);
		return LEASE_EINVALID;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '/') {
			lease__error_set(
			        err, errlen,
			        "name: must not contain '/' (lease names are flat; allowed: "
			        "A-Z a-z 0-9 . _ -)");
			return LEASE_EINVALID;
		}
		if (!is_alnum(c) && c != '.' && c != '_' && c != '-') {
			lease__error_set(err, errlen,
			                 "name: byte 0x%02x at offset %zu is not allowed (allowed: "
			                 "A-Z a-z 0-9 . _ -)",
			                 c, i);
			return LEASE_EINVALID;
		}
	}
	if (!is_alnum((unsigned char)name[0])) {
		lease__error_set(err, errlen, "name: must start with a letter or digit");
		return LEASE_EINVALID;
	}
	if (strstr(name, "..")) {
		lease__error_set(err, errlen, "name: must not contain '..'");
		return LEASE_EINVALID;
	}
	if (name[n - 1] == '.') {
		lease__error_set(err, errlen, "name: must not end with '.'");
		return LEASE_EINVALID;
	}
	if (ends_with(name, n, ".lock")) {
		lease__error_set(err, errlen, "name: must not end with '.lock'");
		return LEASE_EINVALID;
	}
	return 0;
}

/* ---------------------------------------------------------------- slot names */

/* A decimal 1..LEASE_SLOTS_MAX without leading zeros in [s, s+n). */
static int64_t slot_number(const char *s, size_t n)
{
	int64_t v = 0;
	size_t i;

	if (n == 0 || n > 3 || s[0] == '0')
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int lease_slot_name(char out[LEASE_NAME_MAX + 1], const char *base, int64_t index, int64_t slots,
                    char *err, size_t errlen)
{
	char buf[LEASE_NAME_MAX + 32];
	int n;

	if (lease_name_validate(base, err, errlen) < 0)
		return LEASE_EINVALID;
	if (slots < 1 || slots > LEASE_SLOTS_MAX) {
		lease__error_set(err, errlen, "slots: %lld is not in 1..%d", (long long)slots,
		                 LEASE_SLOTS_MAX);
		return LEASE_EINVALID;
	}
	if (index < 1 || index > slots) {
		lease__error_set(err, errlen, "slot: %lld is not in 1..%lld", (long long)index,
		                 (long long)slots);
		return LEASE_EINVALID;
	}
	n = snprintf(buf, sizeof(buf), "%s@%lldof%lld", base, (long long)index, (long long)slots);
	if (n < 0 || n > LEASE_NAME_MAX) {
		/* B72: the rule and the remedy, not the name twice (a buffer's
		 * length of it cut the rule off) */
		int suffix = snprintf(NULL, 0, "@%lldof%lld", (long long)slots, (long long)slots);

		lease__error_set(
		        err, errlen,
		        "a NAME of %zu bytes is too long for %lld slots: each slot is a lease "
		        "named NAME@<i>of%lld, a lease name has at most %d bytes, so with "
		        "--slots %lld NAME may have at most %d bytes: use a shorter NAME",
		        strlen(base), (long long)slots, (long long)slots, LEASE_NAME_MAX,
		        (long long)slots, LEASE_NAME_MAX - suffix);
		return LEASE_EINVALID;
	}
	memcpy(out, buf, (size_t)n + 1);
	return 0;
}

int lease_slot_name_parse(const char *name, char base[LEASE_NAME_MAX + 1], int64_t *index,
                          int64_t *slots, char *err, size_t errlen)
{
	const char *at, *of, *end;
	char b[LEASE_NAME_MAX + 1];
	int64_t i, k;
	size_t n;

	if (!name || !(at = strchr(name, '@')))
		return 0;
	n = (size_t)(at - name);
	end = name + strlen(name);
	if (strlen(name) > LEASE_NAME_MAX || n == 0) {
		lease__error_set(err, errlen,
		                 "name: a slot name is <name>@<i>of<N> in at most %d bytes",
		                 LEASE_NAME_MAX);
		return LEASE_EINVALID;
	}
	memcpy(b, name, n);
	b[n] = '\0';
	if (lease_name_validate(b, err, errlen) < 0)
		return LEASE_EINVALID;
	of = strstr(at + 1, "of");
	if (!of || (i = slot_number(at + 1, (size_t)(of - at - 1))) < 1 ||
	    (k = slot_number(of + 2, (size_t)(end - of - 2))) < 1 || k > LEASE_SLOTS_MAX || i > k) {
		lease__error_set(
		        err, errlen,
		        "name: '@' only in a slot name <name>@<i>of<N> (1 <= i <= N <= %d, no "
		        "leading zeros)",
		        LEASE_SLOTS_MAX);
		return LEASE_EINVALID;
	}
	if (base)
		memcpy(base, b, n + 1);
	if (index)
		*index = i;
	if (slots)
		*slots = k;
	return 1;
}

int lease_ref_name_validate(const char *name, char *err, size_t errlen)
{
	int rc;

	if (name && strchr(name, '@')) {
		char plain[256];

		if ((rc = lease_slot_name_parse(name, NULL, NULL, NULL, err, errlen)) == 1)
			return 0;
		/* the plain rule broken (the '@' byte, or before it), then the slot form */
		lease_name_validate(name, plain, sizeof(plain));
		lease__error_set(
		        err, errlen,
		        "%s; '@' only in a slot name <name>@<i>of<N> (1 <= i <= N <= %d, no "
		        "leading zeros)",
		        plain, LEASE_SLOTS_MAX);
		return LEASE_EINVALID;
	}
	return lease_name_validate(name, err, errlen);
}

int lease_namespace_validate(const char *ns, char *err, size_t errlen)
{
	return lease__namespace_check(ns, err, errlen);
}

int lease_refname(char *out, size_t outlen, const char *ns, const char *name, char *err,
                  size_t errlen)
{
	int rc, n;

	if (!ns)
		ns = "leases";
	if ((rc = lease_namespace_validate(ns, err, errlen)) < 0)
		return rc;
	if ((rc = lease_ref_name_validate(name, err, errlen)) < 0)
		return rc;
	if (!out || outlen == 0) {
		lease__error_set(err, errlen, "refname: no output buffer");
		return LEASE_ENOMEM;
	}
	n = snprintf(out, outlen, "refs/%s/%s", ns, name);
	if (n < 0 || (size_t)n >= outlen) {
		out[0] = '\0';
		lease__error_set(err, errlen, "refname: buffer of %zu bytes too small", outlen);
		return LEASE_ENOMEM;
	}
	return 0;
}

/* ---------------------------------------------------------------- time */

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* Range representable as YYYY-MM-DDTHH:MM:SSZ: 0000-01-01 .. 9999-12-31T23:59:59. */
#define TIME_MIN ((int64_t)-62167219200LL)
#define TIME_MAX ((int64_t)253402300799LL)

/* Write @p v (0 <= v < 10^n) as exactly @p n decimal digits. */
static void put_digits(char *out, int v, int n)
{
	while (n-- > 0) {
		out[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

void lease_time_format(char out[LEASE_TIME_STRSZ + 1], int64_t t)
{
	int64_t days, secs, y;
	int m, d;

	if (t < TIME_MIN)
		t = TIME_MIN;
	if (t > TIME_MAX)
		t = TIME_MAX;
	days = t / 86400;
	secs = t % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	put_digits(out, (int)y, 4);
	out[4] = '-';
	put_digits(out + 5, m, 2);
	out[7] = '-';
	put_digits(out + 8, d, 2);
	out[10] = 'T';
	put_digits(out + 11, (int)(secs / 3600), 2);
	out[13] = ':';
	put_digits(out + 14, (int)(secs / 60 % 60), 2);
	out[16] = ':';
	put_digits(out + 17, (int)(secs % 60), 2);
	out[19] = 'Z';
	out[20] = '\0';
}

static int digits(const char *s, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static int is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int lease_time_parse(int64_t *out, const char *s)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int Y, M, D, h, mi, sec, dim;

	if (!s || strlen(s) != LEASE_TIME_STRSZ)
		return LEASE_EINVALID;
	if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
	    s[19] != 'Z')
		return LEASE_EINVALID;
	if (digits(s, 4, &Y) || digits(s + 5, 2, &M) || digits(s + 8, 2, &D) ||
	    digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &sec))
		return LEASE_EINVALID;
	if (M < 1 || M > 12 || h > 23 || mi > 59 || sec > 59)
		return LEASE_EINVALID;
	dim = mdays[M - 1] + (M == 2 && is_leap(Y));
	if (D < 1 || D > dim)
		return LEASE_EINVALID;
	if (out)
		*out = lease__days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + sec;
	return 0;
}

/* ---------------------------------------------------------------- text checks */

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF, no NUL). Returns the
 * offset of the first bad byte, or (size_t)-1 when valid. When @p no_controls,
 * C0 (U+0000-001F), DEL (U+007F) and C1 (U+0080-009F) also count as bad. */
static size_t utf8_check(const unsigned char *s, size_t n, int no_controls)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		uint32_t cp;
		size_t k, len;

		if (c < 0x80) {
			if (c == 0 || (no_controls && (c < 0x20 || c == 0x7f)))
				return i;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (n - i < len)
			return i;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		if (no_controls && cp >= 0x80 && cp <= 0x9f)
			return i;
		i += len;
	}
	return (size_t)-1;
}

static int is_lower_hex(const char *s, size_t want)
{
	size_t i;

	if (strlen(s) != want)
		return 0;
	for (i = 0; i < want; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int lease_token_validate(const char *token, char *err, size_t errlen)
{
	if (!token || !is_lower_hex(token, LEASE_TOKEN_HEXSZ)) {
		lease__error_set(err, errlen, "not a lease token (%d lowercase hex digits)",
		                 LEASE_TOKEN_HEXSZ);
		return LEASE_EINVALID;
	}
	return 0;
}

static int check_ident(const char *field, const char *s, size_t n, char *err, size_t errlen)
{
	size_t bad;

	if (n < 1 || n > LEASE_IDENT_MAX) {
		lease__error_set(err, errlen, "%s: must be 1-%d bytes (got %zu)", field,
		                 LEASE_IDENT_MAX, n);
		return LEASE_EPAYLOAD;
	}
	bad = utf8_check((const unsigned char *)s, n, 1);
	if (bad != (size_t)-1) {
		lease__error_set(err, errlen,
		                 "%s: must be valid UTF-8 without control characters (bad byte at "
		                 "offset %zu)",
		                 field, bad);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

/* Parse one semver numeric identifier (no leading zeros); saturates at INT_MAX-ish. */
static const char *semver_num(const char *s, int *out)
{
	long v = 0;

	if (*s < '0' || *s > '9')
		return NULL;
	if (*s == '0' && s[1] >= '0' && s[1] <= '9')
		return NULL;
	while (*s >= '0' && *s <= '9') {
		if (v < 100000000L)
			v = v * 10 + (*s - '0');
		s++;
	}
	*out = (int)v;
	return s;
}

/* Dot-separated non-empty identifiers of [0-9A-Za-z-]. */
static const char *semver_idents(const char *s)
{
	for (;;) {
		const char *start = s;
		while (is_alnum((unsigned char)*s) || *s == '-')
			s++;
		if (s == start)
			return NULL;
		if (*s != '.')
			return s;
		s++;
	}
}

/* Semantic Versioning 2.0.0: MAJOR.MINOR.PATCH[-pre][+build]. */
static int semver_parse(const char *s, int *maj, int *min, int *pat)
{
	if (!(s = semver_num(s, maj)) || *s++ != '.')
		return -1;
	if (!(s = semver_num(s, min)) || *s++ != '.')
		return -1;
	if (!(s = semver_num(s, pat)))
		return -1;
	if (*s == '-' && !(s = semver_idents(s + 1)))
		return -1;
	if (*s == '+' && !(s = semver_idents(s + 1)))
		return -1;
	return *s == '\0' ? 0 : -1;
}

/* Deepest nesting of arrays/objects outside strings; stops counting past @p cap. */
static int json_depth_exceeds(const char *s, size_t n, int cap)
{
	int depth = 0, in_str = 0, esc = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '{' || c == '[') {
			if (++depth > cap)
				return 1;
		} else if ((c == '}' || c == ']') && depth > 0)
			depth--;
	}
	return 0;
}

/* ---------------------------------------------------------------- payload parse */

static int get_string(const char **out, size_t *lenout, json_t *root, const char *field, char *err,
                      size_t errlen)
{
	json_t *v = json_object_get(root, field);

	if (!v) {
		lease__error_set(err, errlen, "%s: required field is missing", field);
		return LEASE_EPAYLOAD;
	}
	if (!json_is_string(v)) {
		lease__error_set(err, errlen, "%s: must be a string", field);
		return LEASE_EPAYLOAD;
	}
	*out = json_string_value(v);
	*lenout = json_string_length(v);
	if (strlen(*out) != *lenout) {
		lease__error_set(err, errlen, "%s: must not contain NUL", field);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

/* A string field of exactly @p hexsz lowercase hex digits, copied with its
 * NUL into @p out (hexsz + 1 bytes): the token and the nonce (§2). */
static int get_hex(char *out, json_t *root, const char *field, size_t hexsz, char *err,
                   size_t errlen)
{
	const char *s;
	size_t n;
	int rc;

	if ((rc = get_string(&s, &n, root, field, err, errlen)) < 0)
		return rc;
	if (!is_lower_hex(s, hexsz)) {
		lease__error_set(err, errlen, "%s: must be %zu lowercase hex characters", field,
		                 hexsz);
		return LEASE_EPAYLOAD;
	}
	memcpy(out, s, n + 1);
	return 0;
}

static int get_integer(int64_t *out, json_t *root, const char *field, char *err, size_t errlen)
{
	json_t *v = json_object_get(root, field);

	if (!v) {
		lease__error_set(err, errlen, "%s: required field is missing", field);
		return LEASE_EPAYLOAD;
	}
	if (!json_is_integer(v)) {
		lease__error_set(err, errlen, "%s: must be an integer", field);
		return LEASE_EPAYLOAD;
	}
	*out = (int64_t)json_integer_value(v);
	return 0;
}

static int get_time(int64_t *out, json_t *root, const char *field, char *err, size_t errlen)
{
	const char *s;
	size_t n;
	int rc;

	if ((rc = get_string(&s, &n, root, field, err, errlen)) < 0)
		return rc;
	if (lease_time_parse(out, s) < 0) {
		lease__error_set(
		        err, errlen,
		        "%s: must be a valid UTC timestamp YYYY-MM-DDTHH:MM:SSZ (got '%.40s')",
		        field, s);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

static int check_ttl(int64_t ttl, lease_phase phase, int writer, char *err, size_t errlen)
{
	if (ttl == 0) {
		if (phase == LEASE_PHASE_RELEASED)
			return 0;
		lease__error_set(
		        err, errlen,
		        "ttl_seconds: 0 is allowed only when phase is released (got 0 with "
		        "phase %s)",
		        lease_phase_name(phase));
		return LEASE_EPAYLOAD;
	}
	if (ttl < LEASE_TTL_READ_MIN || ttl > LEASE_TTL_READ_MAX) {
		lease__error_set(err, errlen, "ttl_seconds: must be %d-%d (got %lld)",
		                 LEASE_TTL_READ_MIN, LEASE_TTL_READ_MAX, (long long)ttl);
		return LEASE_EPAYLOAD;
	}
	if (writer && phase == LEASE_PHASE_RELEASED) {
		lease__error_set(err, errlen,
		                 "ttl_seconds: must be 0 when phase is released (got %lld)",
		                 (long long)ttl);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

/* The 1.2.0 heartbeat fields (protocol.md §2): each optional; heartbeats an
 * integer >= 1, previous_heartbeat_at a timestamp. */
static int parse_heartbeat_fields(lease_payload *p, json_t *root, char *err, size_t errlen)
{
	int rc;

	if (json_object_get(root, "heartbeats")) {
		if ((rc = get_integer(&p->heartbeats, root, "heartbeats", err, errlen)) < 0)
			return rc;
		if (p->heartbeats < 1) {
			lease__error_set(err, errlen,
			                 "heartbeats: must be an integer >= 1 (got %lld)",
			                 (long long)p->heartbeats);
			return LEASE_EPAYLOAD;
		}
		p->has_heartbeats = 1;
	}
	if (json_object_get(root, "previous_heartbeat_at")) {
		if ((rc = get_time(&p->previous_heartbeat_at, root, "previous_heartbeat_at", err,
		                   errlen)) < 0)
			return rc;
		p->has_previous_heartbeat = 1;
	}
	return 0;
}

/* The fair waiter's fields (protocol.md §2, §5 "Fair waiting"), added to
 * 1.2.0 as optional fields: queued_at a timestamp, queue_position an
 * integer >= 1. An earlier 1.2 reader ignores both (unknown fields). */
static int parse_queue_fields(lease_payload *p, json_t *root, char *err, size_t errlen)
{
	int rc;

	if (json_object_get(root, "queued_at")) {
		if ((rc = get_time(&p->queued_at, root, "queued_at", err, errlen)) < 0)
			return rc;
		p->has_queued_at = 1;
	}
	if (json_object_get(root, "queue_position")) {
		if ((rc = get_integer(&p->queue_position, root, "queue_position", err, errlen)) < 0)
			return rc;
		if (p->queue_position < 1) {
			lease__error_set(err, errlen,
			                 "queue_position: must be an integer >= 1 (got %lld)",
			                 (long long)p->queue_position);
			return LEASE_EPAYLOAD;
		}
	}
	return 0;
}

/* The set field (protocol.md §2, "Sets"; issue 40 B65), optional in 1.2.0:
 * {"members":[{"name":NAME,"from":OID}, ... 2 to 16 distinct lease names,
 * this one among them; "from" omitted for a member the write created],
 * "write":16 lowercase hex}. An earlier 1.2 reader ignores it. */
static int set_members_check(const lease_payload *p, char *err, size_t errlen)
{
	int i, j, self = 0;

	if (p->set_count < 2 || p->set_count > LEASE_PAYLOAD_SET_MAX) {
		lease__error_set(err, errlen, "set.members: must name 2 to %d leases (got %d)",
		                 LEASE_PAYLOAD_SET_MAX, p->set_count);
		return LEASE_EPAYLOAD;
	}
	for (i = 0; i < p->set_count; i++) {
		if (lease_ref_name_validate(p->set_members[i], NULL, 0) < 0) {
			lease__error_set(err, errlen, "set.members: '%.100s' is not a lease name",
			                 p->set_members[i]);
			return LEASE_EPAYLOAD;
		}
		self |= strcmp(p->set_members[i], p->name) == 0;
		for (j = 0; j < i; j++)
			if (strcmp(p->set_members[i], p->set_members[j]) == 0) {
				lease__error_set(err, errlen, "set.members: '%s' named twice",
				                 p->set_members[i]);
				return LEASE_EPAYLOAD;
			}
	}
	if (!self) {
		lease__error_set(err, errlen, "set.members: must name this lease ('%s')", p->name);
		return LEASE_EPAYLOAD;
	}
	if (!is_lower_hex(p->set_write, LEASE_NONCE_HEXSZ)) {
		lease__error_set(err, errlen, "set.write: must be %d lowercase hex characters",
		                 LEASE_NONCE_HEXSZ);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

/* One entry of set.members into member @p i of @p p. */
static int parse_set_member(lease_payload *p, size_t i, json_t *v, char *err, size_t errlen)
{
	json_t *name = json_object_get(v, "name"), *from = json_object_get(v, "from");

	if (!json_is_object(v) || !json_is_string(name) ||
	    json_string_length(name) > LEASE_NAME_MAX || (from && !json_is_string(from))) {
		lease__error_set(err, errlen,
		                 "set.members: each must be {\"name\": a lease name, \"from\": an "
		                 "object id (optional)}");
		return LEASE_EPAYLOAD;
	}
	memcpy(p->set_members[i], json_string_value(name), json_string_length(name) + 1);
	if (from && (json_string_length(from) != LEASE_OID_HEXSZ ||
	             !is_lower_hex(json_string_value(from), LEASE_OID_HEXSZ) ||
	             lease_oid_fromhex(&p->set_from[i], json_string_value(from)) < 0 ||
	             lease_oid_is_zero(&p->set_from[i]))) {
		lease__error_set(err, errlen,
		                 "set.members: '%s': from must be %d lowercase hex "
		                 "characters, not all zero",
		                 p->set_members[i], LEASE_OID_HEXSZ);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

static int parse_set_field(lease_payload *p, json_t *root, char *err, size_t errlen)
{
	json_t *set = json_object_get(root, "set"), *m, *w, *v;
	size_t i;
	int rc;

	if (!set)
		return 0;
	m = json_object_get(set, "members");
	w = json_object_get(set, "write");
	if (!json_is_object(set) || !json_is_array(m) || !json_is_string(w) ||
	    json_array_size(m) > LEASE_PAYLOAD_SET_MAX ||
	    json_string_length(w) != LEASE_NONCE_HEXSZ) {
		lease__error_set(err, errlen,
		                 "set: must be {\"members\": [2 to %d members], \"write\": %d "
		                 "lowercase hex}",
		                 LEASE_PAYLOAD_SET_MAX, LEASE_NONCE_HEXSZ);
		return LEASE_EPAYLOAD;
	}
	memcpy(p->set_write, json_string_value(w), LEASE_NONCE_HEXSZ + 1);
	json_array_foreach(m, i, v)
	{
		if ((rc = parse_set_member(p, i, v, err, errlen)) < 0)
			return rc;
	}
	p->set_count = (int)json_array_size(m);
	p->has_set = 1;
	return set_members_check(p, err, errlen);
}

static int parse_object(lease_payload *p, json_t *root, char *err, size_t errlen)
{
	const char *s;
	size_t n;
	int rc;
	json_t *ttl;

	/* Version first: the shape of everything else depends on it. */
	if ((rc = get_string(&s, &n, root, "sdlc_version", err, errlen)) < 0)
		return rc;
	if (n >= sizeof(p->sdlc_version) ||
	    semver_parse(s, &p->version_major, &p->version_minor, &p->version_patch) < 0) {
		lease__error_set(err, errlen,
		                 "sdlc_version: must be a semantic version MAJOR.MINOR.PATCH "
		                 "(got '%.40s')",
		                 s);
		return LEASE_EPAYLOAD;
	}
	memcpy(p->sdlc_version, s, n + 1);
	if (p->version_major != SDLC_VERSION_MAJOR) {
		lease__error_set(
		        err, errlen,
		        "sdlc_version: major version %d is unsupported (this build reads %d.x)",
		        p->version_major, SDLC_VERSION_MAJOR);
		return LEASE_EVERSION;
	}

	if ((rc = get_string(&s, &n, root, "name", err, errlen)) < 0)
		return rc;
	if (lease_ref_name_validate(s, err, errlen) < 0)
		return LEASE_EPAYLOAD;
	memcpy(p->name, s, n + 1);

	if ((rc = get_string(&s, &n, root, "owner", err, errlen)) < 0 ||
	    (rc = check_ident("owner", s, n, err, errlen)) < 0)
		return rc;
	memcpy(p->owner, s, n + 1);

	if ((rc = get_string(&s, &n, root, "host", err, errlen)) < 0 ||
	    (rc = check_ident("host", s, n, err, errlen)) < 0)
		return rc;
	memcpy(p->host, s, n + 1);

	if ((rc = get_string(&s, &n, root, "phase", err, errlen)) < 0)
		return rc;
	if (lease_phase_parse(&p->phase, s) < 0) {
		lease__error_set(
		        err, errlen,
		        "phase: must be one of claimed, working, review, released (got '%.40s')",
		        s);
		return LEASE_EPAYLOAD;
	}

	if ((rc = get_hex(p->lease_token, root, "lease_token", LEASE_TOKEN_HEXSZ, err, errlen)) < 0)
		return rc;

	if ((rc = get_integer(&p->transitions, root, "transitions", err, errlen)) < 0)
		return rc;
	if (p->transitions < 0) {
		lease__error_set(err, errlen, "transitions: must be an integer >= 0 (got %lld)",
		                 (long long)p->transitions);
		return LEASE_EPAYLOAD;
	}

	if ((rc = get_time(&p->acquired_at, root, "acquired_at", err, errlen)) < 0 ||
	    (rc = get_time(&p->expires_at, root, "expires_at", err, errlen)) < 0)
		return rc;

	if ((rc = get_hex(p->nonce, root, "nonce", LEASE_NONCE_HEXSZ, err, errlen)) < 0)
		return rc;

	/* ttl_seconds exists since 1.1.0; in a 1.0.x payload it is an unknown field. */
	ttl = json_object_get(root, "ttl_seconds");
	if (p->version_minor == 0) {
		p->has_ttl = 0;
		p->ttl_seconds = 0;
		return 0;
	}
	if (!ttl) {
		lease__error_set(err, errlen, "ttl_seconds: required field is missing (schema %s)",
		                 p->sdlc_version);
		return LEASE_EPAYLOAD;
	}
	if ((rc = get_integer(&p->ttl_seconds, root, "ttl_seconds", err, errlen)) < 0)
		return rc;
	if ((rc = check_ttl(p->ttl_seconds, p->phase, 0, err, errlen)) < 0)
		return rc;
	p->has_ttl = 1;
	/* heartbeats and previous_heartbeat_at exist since 1.2.0, optional (a
	 * heartbeat commit's only); in a 1.1.x payload they are unknown fields. */
	if (p->version_minor < 2)
		return 0;
	if ((rc = parse_heartbeat_fields(p, root, err, errlen)) < 0 ||
	    (rc = parse_queue_fields(p, root, err, errlen)) < 0)
		return rc;
	return parse_set_field(p, root, err, errlen);
}

int lease_payload_parse(lease_payload *out, const char *json, size_t len, char *err, size_t errlen)
{
	lease_payload p;
	json_error_t jerr;
	json_t *root = NULL;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	memset(&p, 0, sizeof(p));
	if (!out || !json) {
		lease__error_set(err, errlen, "payload: no input");
		return LEASE_EPAYLOAD;
	}
	if (len > LEASE_MESSAGE_MAX) {
		lease__error_set(err, errlen, "payload: larger than %d bytes (got %zu)",
		                 LEASE_MESSAGE_MAX, len);
		return LEASE_EPAYLOAD;
	}
	if (json_depth_exceeds(json, len, LEASE_JSON_DEPTH_MAX)) {
		lease__error_set(err, errlen, "payload: JSON nesting deeper than %d levels",
		                 LEASE_JSON_DEPTH_MAX);
		return LEASE_EPAYLOAD;
	}
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (json_error_code(&jerr) == json_error_duplicate_key)
			lease__error_set(err, errlen, "payload: duplicate key (%s)", jerr.text);
		else
			lease__error_set(err, errlen,
			                 "payload: not valid JSON: %s (line %d, column %d)",
			                 jerr.text, jerr.line, jerr.column);
		return LEASE_EPAYLOAD;
	}
	if (!json_is_object(root)) {
		lease__error_set(err, errlen, "payload: must be a JSON object");
		rc = LEASE_EPAYLOAD;
		goto done;
	}
	if ((rc = parse_object(&p, root, err, errlen)) < 0)
		goto done;
	*out = p;
done:
	json_decref(root);
	return rc;
}

/* ---------------------------------------------------------------- validate, emit */

static int field_string(const char *field, const char *s, size_t cap, char *err, size_t errlen)
{
	if (!memchr(s, '\0', cap)) {
		lease__error_set(err, errlen, "%s: not NUL-terminated", field);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

/* What a writer may put in the 1.2.0 heartbeat fields (protocol.md §2):
 * only on a live payload; previous_heartbeat_at only with heartbeats >= 2,
 * within years 0000-9999 and not after this heartbeat's own time. */
static int check_heartbeat_fields(const lease_payload *p, char *err, size_t errlen)
{
	if (!p->has_heartbeats && !p->has_previous_heartbeat)
		return 0;
	if (p->phase == LEASE_PHASE_RELEASED) {
		lease__error_set(err, errlen, "heartbeats: only a live payload carries it");
		return LEASE_EPAYLOAD;
	}
	if (!p->has_heartbeats || p->heartbeats < 1) {
		lease__error_set(err, errlen, "heartbeats: must be an integer >= 1");
		return LEASE_EPAYLOAD;
	}
	if (!p->has_previous_heartbeat)
		return 0;
	if (p->heartbeats < 2) {
		lease__error_set(
		        err, errlen,
		        "previous_heartbeat_at: only a heartbeat that replaced one (heartbeats "
		        ">= 2) carries it");
		return LEASE_EPAYLOAD;
	}
	if (p->previous_heartbeat_at < TIME_MIN ||
	    p->previous_heartbeat_at > lease__policy_heartbeat_time(p, 0, NULL)) {
		lease__error_set(err, errlen,
		                 "previous_heartbeat_at: must lie in years 0000-9999 and not after "
		                 "this heartbeat's time");
		return LEASE_EPAYLOAD;
	}
	return 0;
}

/* What a writer may put in the fair waiter's fields (protocol.md §2, §5
 * "Fair waiting"): queued_at only on a live payload, within years 0000-9999
 * and not after the commit's write time (expires_at − ttl_seconds);
 * queue_position only with queued_at, >= 1 when recorded. */
static int check_queue_fields(const lease_payload *p, char *err, size_t errlen)
{
	if (!p->has_queued_at) {
		if (p->queue_position != 0) {
			lease__error_set(err, errlen, "queue_position: only with queued_at");
			return LEASE_EPAYLOAD;
		}
		return 0;
	}
	if (p->phase == LEASE_PHASE_RELEASED) {
		lease__error_set(err, errlen, "queued_at: only a live payload carries it");
		return LEASE_EPAYLOAD;
	}
	if (p->queued_at < TIME_MIN || p->queued_at > lease__policy_heartbeat_time(p, 0, NULL)) {
		lease__error_set(
		        err, errlen,
		        "queued_at: must lie in years 0000-9999 and not after the commit's "
		        "write time");
		return LEASE_EPAYLOAD;
	}
	if (p->queue_position < 0) {
		lease__error_set(err, errlen, "queue_position: must be an integer >= 1 (got %lld)",
		                 (long long)p->queue_position);
		return LEASE_EPAYLOAD;
	}
	return 0;
}

int lease_payload_validate(const lease_payload *p, char *err, size_t errlen)
{
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!p) {
		lease__error_set(err, errlen, "payload: none");
		return LEASE_EPAYLOAD;
	}
	if ((rc = field_string("name", p->name, sizeof(p->name), err, errlen)) < 0 ||
	    (rc = field_string("owner", p->owner, sizeof(p->owner), err, errlen)) < 0 ||
	    (rc = field_string("host", p->host, sizeof(p->host), err, errlen)) < 0 ||
	    (rc = field_string("lease_token", p->lease_token, sizeof(p->lease_token), err,
	                       errlen)) < 0 ||
	    (rc = field_string("nonce", p->nonce, sizeof(p->nonce), err, errlen)) < 0)
		return rc;
	if (lease_ref_name_validate(p->name, err, errlen) < 0)
		return LEASE_EPAYLOAD;
	if ((rc = check_ident("owner", p->owner, strlen(p->owner), err, errlen)) < 0 ||
	    (rc = check_ident("host", p->host, strlen(p->host), err, errlen)) < 0)
		return rc;
	if (p->phase < LEASE_PHASE_CLAIMED || p->phase > LEASE_PHASE_RELEASED) {
		lease__error_set(err, errlen,
		                 "phase: must be one of claimed, working, review, released");
		return LEASE_EPAYLOAD;
	}
	if (lease_token_validate(p->lease_token, NULL, 0) < 0) {
		lease__error_set(err, errlen, "lease_token: must be %d lowercase hex characters",
		                 LEASE_TOKEN_HEXSZ);
		return LEASE_EPAYLOAD;
	}
	if (p->transitions < 0) {
		lease__error_set(err, errlen, "transitions: must be an integer >= 0 (got %lld)",
		                 (long long)p->transitions);
		return LEASE_EPAYLOAD;
	}
	if (p->acquired_at < TIME_MIN || p->acquired_at > TIME_MAX) {
		lease__error_set(err, errlen, "acquired_at: outside years 0000-9999");
		return LEASE_EPAYLOAD;
	}
	if (p->expires_at < TIME_MIN || p->expires_at > TIME_MAX) {
		lease__error_set(err, errlen, "expires_at: outside years 0000-9999");
		return LEASE_EPAYLOAD;
	}
	if (!is_lower_hex(p->nonce, LEASE_NONCE_HEXSZ)) {
		lease__error_set(err, errlen, "nonce: must be %d lowercase hex characters",
		                 LEASE_NONCE_HEXSZ);
		return LEASE_EPAYLOAD;
	}
	if (!p->has_ttl) {
		lease__error_set(err, errlen, "ttl_seconds: a writer must set it (schema %s)",
		                 SDLC_VERSION);
		return LEASE_EPAYLOAD;
	}
	if ((rc = check_ttl(p->ttl_seconds, p->phase, 1, err, errlen)) < 0)
		return rc;
	if ((rc = check_heartbeat_fields(p, err, errlen)) < 0 ||
	    (rc = check_queue_fields(p, err, errlen)) < 0)
		return rc;
	if (!p->has_set)
		return 0;
	if (p->phase == LEASE_PHASE_RELEASED) {
		lease__error_set(err, errlen, "set: only a live payload carries it");
		return LEASE_EPAYLOAD;
	}
	return set_members_check(p, err, errlen);
}

/* The set field as JSON (parse_set_field()'s shape); NULL: no memory. */
static json_t *emit_set_field(const lease_payload *p)
{
	json_t *m = json_array(), *e;
	char hex[LEASE_OID_HEXSZ + 1];
	int i;

	for (i = 0; m && i < p->set_count; i++) {
		e = json_pack("{s:s}", "name", p->set_members[i]);
		if (e && !lease_oid_is_zero(&p->set_from[i])) {
			lease_oid_tohex(hex, &p->set_from[i]);
			if (json_object_set_new(e, "from", json_string(hex)) < 0) {
				json_decref(e);
				e = NULL;
			}
		}
		if (!e || json_array_append_new(m, e) < 0) {
			json_decref(m);
			return NULL;
		}
	}
	return m ? json_pack("{s:o, s:s}", "members", m, "write", p->set_write) : NULL;
}

int lease_payload_writable(const lease_payload *p, char *err, size_t errlen)
{
	if (!p)
		return LEASE_EVERSION;
	if (p->version_major != SDLC_VERSION_MAJOR || p->version_minor > SDLC_VERSION_MINOR) {
		lease__error_set(
		        err, errlen,
		        "payload written by a newer schema: sdlc_version %s, this build writes "
		        "%s",
		        p->sdlc_version[0] ? p->sdlc_version : "(unset)", SDLC_VERSION);
		return LEASE_EVERSION;
	}
	return 0;
}

int lease_payload_emit(char **out, const lease_payload *p)
{
	char acq[LEASE_TIME_STRSZ + 1], exp[LEASE_TIME_STRSZ + 1];
	json_t *root;
	char *s;

	if (!out)
		return LEASE_EINVALID;
	*out = NULL;
	if (lease_payload_validate(p, NULL, 0) < 0)
		return LEASE_EPAYLOAD;
	lease_time_format(acq, p->acquired_at);
	lease_time_format(exp, p->expires_at);
	root = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:I}", "sdlc_version",
	                 SDLC_VERSION, "name", p->name, "owner", p->owner, "host", p->host, "phase",
	                 lease_phase_name(p->phase), "lease_token", p->lease_token, "transitions",
	                 (json_int_t)p->transitions, "acquired_at", acq, "expires_at", exp, "nonce",
	                 p->nonce, "ttl_seconds", (json_int_t)p->ttl_seconds);
	if (!root)
		return LEASE_ENOMEM;
	if (p->has_heartbeats &&
	    json_object_set_new(root, "heartbeats", json_integer((json_int_t)p->heartbeats)) < 0) {
		json_decref(root);
		return LEASE_ENOMEM;
	}
	if (p->has_previous_heartbeat) {
		lease_time_format(acq, p->previous_heartbeat_at);
		if (json_object_set_new(root, "previous_heartbeat_at", json_string(acq)) < 0) {
			json_decref(root);
			return LEASE_ENOMEM;
		}
	}
	if (p->has_queued_at) {
		lease_time_format(acq, p->queued_at);
		if (json_object_set_new(root, "queued_at", json_string(acq)) < 0 ||
		    (p->queue_position > 0 &&
		     json_object_set_new(root, "queue_position",
		                         json_integer((json_int_t)p->queue_position)) < 0)) {
			json_decref(root);
			return LEASE_ENOMEM;
		}
	}
	if (p->has_set && json_object_set_new(root, "set", emit_set_field(p)) < 0) {
		json_decref(root);
		return LEASE_ENOMEM;
	}
	s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	if (!s)
		return LEASE_ENOMEM;
	*out = s;
	return 0;
}

/* ---------------------------------------------------------------- commit message */

int lease_message_build(char **out, const lease_payload *p, lease_op op)
{
	char *json = NULL, *msg = NULL;
	size_t cap;
	int rc, n;

	if (!out)
		return LEASE_EINVALID;
	*out = NULL;
	if (op <= LEASE_OP_UNKNOWN || op > LEASE_OP_MIGRATE)
		return LEASE_EINVALID;
	if ((rc = lease_payload_emit(&json, p)) < 0)
		return rc;
	cap = strlen(p->name) + strlen(p->owner) + strlen(p->host) + strlen(json) + 64;
	if (!(msg = malloc(cap))) {
		rc = LEASE_ENOMEM;
		goto done;
	}
	n = snprintf(msg, cap, "%s: %s %s by %s on %s\n\n%s\n", p->name, lease_op_name(op),
	             lease_phase_name(p->phase), p->owner, p->host, json);
	if (n < 0 || (size_t)n >= cap || n > LEASE_MESSAGE_MAX) {
		rc = LEASE_EPAYLOAD;
		goto done;
	}
	*out = msg;
	msg = NULL;
	rc = 0;
done:
	free(msg);
	free(json);
	return rc;
}

int lease_message_parse(lease_payload *out, lease_op *op_out, const char *message, size_t len,
                        const char *expected_name, char *err, size_t errlen)
{
	const char *nl, *body, *sum_end, *p;
	lease_payload pl;
	size_t bad, nlen;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (op_out)
		*op_out = LEASE_OP_UNKNOWN;
	if (!out || !message) {
		lease__error_set(err, errlen, "message: no input");
		return LEASE_EPAYLOAD;
	}
	if (len > LEASE_MESSAGE_MAX) {
		lease__error_set(err, errlen, "message: larger than %d bytes (got %zu)",
		                 LEASE_MESSAGE_MAX, len);
		return LEASE_EPAYLOAD;
	}
	bad = utf8_check((const unsigned char *)message, len, 0);
	if (bad != (size_t)-1) {
		lease__error_set(err, errlen, "message: not valid UTF-8 (bad byte at offset %zu)",
		                 bad);
		return LEASE_EPAYLOAD;
	}
	sum_end = memchr(message, '\n', len);
	if (!sum_end) {
		lease__error_set(err, errlen, "message: no blank line after the summary line");
		return LEASE_EPAYLOAD;
	}
	if (sum_end == message) {
		lease__error_set(err, errlen, "message: summary line is empty");
		return LEASE_EPAYLOAD;
	}
	/* The payload is everything after the first blank line. */
	body = NULL;
	for (nl = sum_end; nl && nl + 1 < message + len;
	     nl = memchr(nl + 1, '\n', (size_t)(message + len - nl - 1))) {
		if (nl[1] == '\n') {
			body = nl + 2;
			break;
		}
	}
	if (!body) {
		lease__error_set(err, errlen, "message: no blank line after the summary line");
		return LEASE_EPAYLOAD;
	}
	rc = lease_payload_parse(&pl, body, (size_t)(message + len - body), err, errlen);
	if (rc < 0)
		return rc;
	if (expected_name && strcmp(pl.name, expected_name) != 0) {
		lease__error_set(err, errlen,
		                 "name mismatch: payload name '%s' is not the ref's name '%.100s'",
		                 pl.name, expected_name);
		return LEASE_EPAYLOAD;
	}
	/* Summary "<name>: <op> <phase> by <owner> on <host>"; a foreign one is no error. */
	if (op_out) {
		nlen = strlen(pl.name);
		if ((size_t)(sum_end - message) > nlen + 2 && memcmp(message, pl.name, nlen) == 0 &&
		    message[nlen] == ':' && message[nlen + 1] == ' ') {
			const char *w = message + nlen + 2;
			for (p = w; p < sum_end && *p != ' '; p++)
				;
			if (p < sum_end)
				*op_out = op_from_word(w, (size_t)(p - w));
		}
	}
	*out = pl;
	return 0;
}

/* ---- the version stamp and the archive ref name (schemas.h) --------------- */

void lease__payload_stamp(lease_payload *p)
{
	snprintf(p->sdlc_version, sizeof(p->sdlc_version), "%s", SDLC_VERSION);
	p->version_major = SDLC_VERSION_MAJOR;
	p->version_minor = SDLC_VERSION_MINOR;
	p->version_patch = SDLC_VERSION_PATCH;
}

int lease__archive_prefix(char *out, size_t outlen, const char *ns, const char *name)
{
	int n = snprintf(out, outlen, "refs/%s-archive/%s/", ns, name);

	return n < 0 || (size_t)n >= outlen ? LEASE_EINVALID : 0;
}

int lease__archive_refname(char *out, size_t outlen, const char *ns, const char *name,
                           const lease_payload *p)
{
	char ts[LEASE_TIME_STRSZ + 1];
	int n;

	lease_time_format(ts, p->expires_at);
	n = snprintf(out, outlen, "refs/%s-archive/%s/%.4s%.2s%.2sT%.2s%.2s%.2sZ-%.8s", ns, name,
	             ts, ts + 5, ts + 8, ts + 11, ts + 14, ts + 17, p->lease_token);
	return n < 0 || (size_t)n >= outlen ? LEASE_EINVALID : 0;
}

int lease__archive_tail_valid(const char *tail)
{
	size_t i;

	if (strlen(tail) != 25 || tail[8] != 'T' || tail[15] != 'Z' || tail[16] != '-')
		return 0;
	for (i = 0; i < 25; i++) {
		char c = tail[i];
		if (i == 8 || i == 15 || i == 16)
			continue;
		if (i < 15 ? !(c >= '0' && c <= '9')
		           : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
	}
	return 1;
}

/* ---- the lenient reader (schemas.h) ---------------------------------------- */

static int64_t lenient_transitions(const char *msg)
{
	static const char key[] = "\"transitions\"";
	const char *m = msg;

	while (m && (m = strstr(m, key)) != NULL) {
		const char *v = m + sizeof(key) - 1;
		char *end;
		long long n;

		m = v;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v++ != ':')
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		if (!isdigit((unsigned char)*v))
			continue;
		n = strtoll(v, &end, 10);
		if (end != v && n >= 0)
			return (int64_t)n;
	}
	return -1;
}

void lease__lenient_read(lease_lenient *out, const char *msg)
{
	char buf[LEASE_TIME_STRSZ + 1];
	const char *e;

	memset(out, 0, sizeof(*out));
	out->transitions = lenient_transitions(msg);
	if (!msg)
		return;
	out->released = strstr(msg, "\"phase\":\"released\"") != NULL;
	if (!(e = strstr(msg, "\"expires_at\":\"")))
		return;
	e += strlen("\"expires_at\":\"");
	if (strlen(e) < LEASE_TIME_STRSZ)
		return;
	memcpy(buf, e, LEASE_TIME_STRSZ);
	buf[LEASE_TIME_STRSZ] = '\0';
	out->has_expires = lease_time_parse(&out->expires_at, buf) == 0;
}
