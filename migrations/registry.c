/*
 * The migration registry (protocol.md §8): every registered step in id order,
 * and the chain from a payload's version to a target. The steps are not
 * named here: the build writes $(BUILD)/migrations/registry.inc, one
 * `MIGRATION(NNNN)` line per migrations/NNNN_<what>.c in id order, and this
 * file declares and lists them from it. Adding a step: see
 * migrations/README.md.
 */
#include "lease/migration.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each file's step, defined in migrations/NNNN_<what>.c. */
#define MIGRATION(n) extern const lease_migration lease_migration_##n;
#include "registry.inc"
#undef MIGRATION

/* One generated line: the id of the file the step was registered from. */
typedef struct registered_step {
	const char *file_id; /* "NNNN", the file name's prefix */
	const lease_migration *step;
} registered_step;

/* Every registered migration in file (= id) order, then a terminator so that
 * a tree without steps still compiles; lease__migrations_check verifies. */
static const registered_step registered[] = {
#define MIGRATION(n) {#n, &lease_migration_##n},
#include "registry.inc"
#undef MIGRATION
        {NULL, NULL},
};

#define N_REGISTERED (sizeof(registered) / sizeof(registered[0]) - 1)

int lease__migration_stamp(lease_payload *p, const lease_migration *m,
                           const lease_migration_input *in)
{
	char nonce[LEASE_NONCE_HEXSZ + 1];
	int rc;

	if ((rc = lease_random_hex(nonce, LEASE_NONCE_HEXSZ / 2, in->random)) < 0)
		return rc;
	snprintf(p->sdlc_version, sizeof(p->sdlc_version), "%s", m->to);
	p->version_major = m->to_major;
	p->version_minor = m->to_minor;
	p->version_patch = m->to_patch;
	memcpy(p->nonce, nonce, sizeof(p->nonce));
	return 0;
}

size_t lease__migrations_count(void)
{
	return N_REGISTERED;
}

const lease_migration *lease__migration_at(size_t i)
{
	return i < N_REGISTERED ? registered[i].step : NULL;
}

const lease_migration *lease__migration_from(int major, int minor)
{
	size_t i;

	for (i = 0; i < N_REGISTERED; i++)
		if (registered[i].step->from_major == major &&
		    registered[i].step->from_minor == minor)
			return registered[i].step;
	return NULL;
}

int lease__migration_version_parse(const char *s, int *major, int *minor, int *patch)
{
	int *parts[3] = {major, minor, patch};
	const char *p = s;
	int i;

	if (!s)
		return LEASE_EINVALID;
	for (i = 0; i < 3; i++) {
		char *end = NULL;
		long v;

		if (*p < '0' || *p > '9')
			return LEASE_EINVALID;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v > 1000000 || end == p)
			return LEASE_EINVALID;
		*parts[i] = (int)v;
		p = end;
		if (i < 2) {
			if (*p != '.')
				return LEASE_EINVALID;
			p++;
		}
	}
	return *p ? LEASE_EINVALID : 0;
}

int lease__migrations_check(char *err, size_t errlen)
{
	const lease_migration *prev = NULL;
	size_t i, k;

	for (i = 0; i < N_REGISTERED; i++) {
		const lease_migration *m = registered[i].step;
		int ma = 0, mi = 0, pa = 0;

		if (!m->id || strlen(m->id) != 4)
			return (lease__error_set(err, errlen, "migration %s: %s", m->id,
			                         "id must be four digits"),
			        LEASE_EINTERNAL);
		for (k = 0; k < 4; k++)
			if (m->id[k] < '0' || m->id[k] > '9')
				return (lease__error_set(err, errlen, "migration %s: %s", m->id,
				                         "id must be four digits"),
				        LEASE_EINTERNAL);
		if (strcmp(m->id, registered[i].file_id) != 0)
			return (lease__error_set(err, errlen, "migration %s: %s", m->id,
			                         "id must be the prefix of its file name "
			                         "(lease_migration_NNNN "
			                         "in NNNN_<what>.c)"),
			        LEASE_EINTERNAL);
		if (prev && strcmp(prev->id, m->id) >= 0)
			return (lease__error_set(err, errlen, "migration %s: %s", m->id,
			                         "ids must be strictly increasing in the registry"),
			        LEASE_EINTERNAL);
		if (!m->apply || !m->description || !*m->description ||
		    strchr(m->description, '\n'))
			return (lease__error_set(
			                err, errlen, "migration %s: %s", m->id,
			                "needs an apply function and a one-line description"),
			        LEASE_EINTERNAL);
		if (lease__migration_version_parse(m->to, &ma, &mi, &pa) < 0 || ma != m->to_major ||
		    mi != m->to_minor || pa != m->to_patch)
			return (lease__error_set(err, errlen, "migration %s: %s", m->id,
			                         "'to' disagrees with to_major/minor/patch"),
			        LEASE_EINTERNAL);
		if (m->to_major < m->from_major ||
		    (m->to_major == m->from_major && m->to_minor <= m->from_minor))
			return (lease__error_set(err, errlen, "migration %s: %s", m->id,
			                         "a step must raise the version"),
			        LEASE_EINTERNAL);
		if (prev && (prev->to_major != m->from_major || prev->to_minor != m->from_minor))
			return (lease__error_set(
			                err, errlen, "migration %s: %s", m->id,
			                "must start at the version the previous step ends at"),
			        LEASE_EINTERNAL);
		prev = m;
	}
	return 0;
}

int lease__migrations_chain(const lease_migration **steps, size_t max, size_t *n, int major,
                            int minor, int to_major, int to_minor)
{
	size_t k = 0;

	*n = 0;
	if (major > to_major || (major == to_major && minor > to_minor))
		return LEASE_EVERSION;
	while (major != to_major || minor != to_minor) {
		const lease_migration *m = lease__migration_from(major, minor);

		if (!m || k >= max || k >= N_REGISTERED)
			return LEASE_EINVALID;
		if (m->to_major > to_major || (m->to_major == to_major && m->to_minor > to_minor))
			return LEASE_EINVALID; /* the chain jumps past the target */
		steps[k++] = m;
		major = m->to_major;
		minor = m->to_minor;
	}
	*n = k;
	return 0;
}
