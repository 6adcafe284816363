/* Reading a lease's archive refs (protocol.md §1): the highest archived
 * `transitions`, so a re-created name keeps counting (§5). */
#include "lease/door.h"
#include "lease/schemas.h"
#include "store/frontend.h"

#include <stdio.h>
#include <string.h>

int lease_fetch_archive_max_transitions(int64_t *out, int *found, lease_store *st, const char *name)
{
	lease_ref_list list = {0};
	char prefix[LEASE_NS_MAX + LEASE_NAME_MAX + 32];
	char err[256];
	size_t i, plen;
	int rc;

	lease__store_clear_error(st); /* a call begins: its first error wins */
	*found = 0;
	if ((rc = lease_ref_name_validate(name, err, sizeof(err))) < 0)
		return lease__store_set_error(st, rc, "%s", err);
	if ((rc = lease__archive_prefix(prefix, sizeof(prefix), lease_store_namespace(st), name)) <
	    0)
		return lease__store_set_error(st, rc, "archive prefix of %s: too long", name);
	plen = strlen(prefix);
	if ((rc = lease__list_refs(&list, st, prefix)) < 0)
		return rc;
	for (i = 0; i < list.count; i++) {
		lease_ref_entry *e = &list.items[i];
		lease_commit c = {0};
		lease_payload p;
		const lease_commit *cp = NULL;

		/* Only direct children of the prefix (look-alikes are filtered). */
		if (strncmp(e->refname, prefix, plen) != 0 || !e->refname[plen] ||
		    strchr(e->refname + plen, '/'))
			continue;
		if (e->has_commit) {
			cp = &e->commit;
		} else if (lease__read_commit(&c, st, &e->oid) == 0) {
			cp = &c;
		}
		if (cp && cp->is_commit && cp->message &&
		    lease_message_parse(&p, NULL, cp->message, strlen(cp->message), name, err,
		                        sizeof(err)) == 0) {
			if (!*found || p.transitions > *out)
				*out = p.transitions;
			*found = 1;
		}
		lease_commit_clear(&c);
	}
	lease_ref_list_clear(&list);
	return 0;
}
