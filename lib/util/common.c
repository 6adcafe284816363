/* Error ids, object ids and injected randomness (reflease/common.h). */
#include "reflease/common.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

const char *lease_error_id(int code)
{
	switch (code) {
	case LEASE_OK: return "ok";
	case LEASE_EHELD: return "held";
	case LEASE_ENOTHOLDER: return "not_holder";
	case LEASE_EEXPIRED: return "expired";
	case LEASE_ECAS: return "cas_failed";
	case LEASE_EUNVERIFIED: return "unverified";
	case LEASE_EPAYLOAD: return "malformed_payload";
	case LEASE_EVERSION: return "unsupported_version";
	case LEASE_EINVALID: return "invalid_argument";
	case LEASE_ENET: return "unreachable";
	case LEASE_EAUTH: return "permission_denied";
	case LEASE_ERATELIMIT: return "rate_limited";
	case LEASE_ECONFIG: return "configuration";
	case LEASE_ENOTFOUND: return "not_found";
	case LEASE_EEXISTS: return "exists";
	case LEASE_ENOMEM: return "out_of_memory";
	case LEASE_ELOCKED: return "locked";
	default: return "internal";
	}
}

int lease__hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int lease_oid_fromhex(lease_oid *out, const char *hex)
{
	size_t i;

	if (!hex || strlen(hex) != LEASE_OID_HEXSZ)
		return LEASE_EINVALID;
	for (i = 0; i < LEASE_OID_RAWSZ; i++) {
		int hi = lease__hex_digit(hex[2 * i]), lo = lease__hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return LEASE_EINVALID;
		out->id[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

void lease_oid_tohex(char out[LEASE_OID_HEXSZ + 1], const lease_oid *oid)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < LEASE_OID_RAWSZ; i++) {
		out[2 * i] = digits[oid->id[i] >> 4];
		out[2 * i + 1] = digits[oid->id[i] & 0xf];
	}
	out[LEASE_OID_HEXSZ] = '\0';
}

int lease_oid_equal(const lease_oid *a, const lease_oid *b)
{
	return memcmp(a->id, b->id, LEASE_OID_RAWSZ) == 0;
}

int lease_oid_is_zero(const lease_oid *oid)
{
	static const lease_oid zero;
	return lease_oid_equal(oid, &zero);
}

int lease_random_bytes(const lease_random *rnd, unsigned char *buf, size_t len)
{
	size_t done = 0;

	if (rnd && rnd->fill)
		return rnd->fill(buf, len, rnd->payload);
	while (done < len) {
		ssize_t n = getrandom(buf + done, len - done, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return LEASE_EINTERNAL;
		}
		done += (size_t)n;
	}
	return 0;
}

int lease_random_hex(char *out, size_t nbytes, const lease_random *rnd)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char buf[64];
	size_t i;
	int rc;

	if (nbytes > sizeof(buf))
		return LEASE_EINVALID;
	if ((rc = lease_random_bytes(rnd, buf, nbytes)) < 0)
		return rc;
	for (i = 0; i < nbytes; i++) {
		out[2 * i] = digits[buf[i] >> 4];
		out[2 * i + 1] = digits[buf[i] & 0xf];
	}
	out[2 * nbytes] = '\0';
	return 0;
}

void lease__error_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	lease__err_mark_cut(err, errlen, n);
}

void lease__err_mark_cut(char *buf, size_t len, int needed)
{
	if (!buf || len < 8 || needed < 0 || (size_t)needed < len)
		return;
	memcpy(buf + len - 4, "...", 4);
}

int64_t lease__days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int lease__host_is_loopback(const char *host)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct in_addr a4;
	struct in6_addr a6;
	char buf[INET6_ADDRSTRLEN + 1];
	size_t n;

	if (!host)
		return 0;
	n = strlen(host);
	if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, "localhost.") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof(buf))
		return 0;
	memcpy(buf, host, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET6, buf, &a6) != 1)
		return 0;
	if (memcmp(&a6, &in6addr_loopback, sizeof(a6)) == 0)
		return 1;
	return memcmp(a6.s6_addr, mapped, sizeof(mapped)) == 0 && a6.s6_addr[12] == 127;
}

void lease__vlog(lease_log_fn log, void *payload, int max_level, int level, const char *fmt,
                 va_list ap)
{
	char buf[1024];

	if (!log || level > max_level)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log(level, buf, payload);
}

double lease__clock_seconds(lease_clock_id id)
{
	static const clockid_t ids[] = {CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME};
	struct timespec ts;

	if ((unsigned)id >= sizeof(ids) / sizeof(ids[0]) || clock_gettime(ids[id], &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t lease__mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int lease__sleep_ms(int64_t ms, lease_sleep_mode mode)
{
	struct timespec ts;

	if (ms <= 0)
		return 0;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0) {
		if (errno != EINTR)
			return 0;
		if (mode == LEASE_SLEEP_INTERRUPTIBLE)
			return -1;
	}
	return 0;
}

int64_t lease__env_mono_ms(const lease_clock *c)
{
	if (c && c->mono_ms)
		return c->mono_ms(c->payload);
	return lease__mono_ms();
}

int lease__env_sleep_ms(const lease_clock *c, int64_t ms, lease_sleep_mode mode)
{
	if (ms <= 0)
		return 0;
	if (c && c->sleep_ms)
		return c->sleep_ms(ms, mode == LEASE_SLEEP_INTERRUPTIBLE, c->payload) < 0 ? -1 : 0;
	return lease__sleep_ms(ms, mode);
}

int lease__env_sleep_injected(const lease_clock *c)
{
	return c && c->sleep_ms;
}

double lease__env_wall_fraction(const lease_clock *c)
{
	double wall;

	if (c && c->now)
		return 0.0; /* an injected wall clock has whole seconds only */
	wall = lease__clock_seconds(LEASE_CLOCK_REALTIME);
	return wall - (double)(int64_t)wall;
}
