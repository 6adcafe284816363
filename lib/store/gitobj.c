/* libgit2 code shared by the local and remote transports (gitobj.h). */
#include "gitobj.h"
#include "git2compat.h"

#include <git2/sys/commit.h>
#include <pthread.h>
#include <string.h>

#define EMPTY_TREE_HEX "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

static pthread_once_t git_once = PTHREAD_ONCE_INIT;
static int git_rc;

static int git_setup(void)
{
	if (git_libgit2_init() < 0)
		return LEASE_EINTERNAL;
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
	/* Each commit is read once per operation: caching commits only costs
	 * memory (a 10,000-lease sweep held ~20 MiB of them). */
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_COMMIT, (size_t)0);
	/* A sweep reads each pack once, front to back: map it in 1 MiB windows
	 * and release them past 8 MiB (least recently used first) instead of
	 * keeping the whole pack resident (libgit2's defaults: 1 GiB windows,
	 * 8 GiB mapped; a 100,000-lease pack is 60 MiB; issue 29). */
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, (size_t)1024 * 1024);
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, (size_t)8 * 1024 * 1024);
	return lease__git_net_setup() < 0 ? LEASE_EINTERNAL : 0;
}

static void git_setup_once(void)
{
	git_rc = git_setup();
}

int lease__git_global_init(void)
{
	pthread_once(&git_once, git_setup_once);
	return git_rc;
}

void lease__git_oid_to(git_oid *g, const lease_oid *o)
{
	memcpy(g->id, o->id, LEASE_OID_RAWSZ);
}

void lease__git_oid_from(lease_oid *o, const git_oid *g)
{
	memcpy(o->id, g->id, LEASE_OID_RAWSZ);
}

static int empty_tree(git_oid *tree, git_repository *repo, int *have_empty_tree)
{
	git_treebuilder *tb = NULL;
	int err;

	if ((err = git_oid_fromstr(tree, EMPTY_TREE_HEX)) < 0 || *have_empty_tree)
		return err;
	if ((err = git_treebuilder_new(&tb, repo, NULL)) == 0)
		err = git_treebuilder_write(tree, tb);
	git_treebuilder_free(tb);
	if (err == 0)
		*have_empty_tree = 1;
	return err;
}

int lease__git_write_commit(lease_oid *out, git_repository *repo, int *have_empty_tree,
                            const lease_oid *parent, const char *message, int64_t when,
                            const char **what)
{
	git_signature *sig = NULL;
	git_oid tree, pid, id;
	const git_oid *parents[1];
	int err;

	if ((err = empty_tree(&tree, repo, have_empty_tree)) < 0) {
		*what = "cannot write the empty tree";
		return err;
	}
	if ((err = git_signature_new(&sig, "reflease", "reflease@localhost", (git_time_t)when, 0)) <
	    0) {
		*what = "cannot build the commit signature";
		return err;
	}
	if (parent) {
		lease__git_oid_to(&pid, parent);
		parents[0] = &pid;
	}
	err = git_commit_create_from_ids(&id, repo, NULL, sig, sig, NULL, message, &tree,
	                                 parent ? 1 : 0, parents);
	git_signature_free(sig);
	if (err < 0) {
		*what = "cannot write the commit";
		return err;
	}
	lease__git_oid_from(out, &id);
	return 0;
}

int lease__git_read_commit(lease_commit *out, git_repository *repo, const lease_oid *oid,
                           const char **what)
{
	git_object *obj = NULL;
	const git_commit *c;
	const char *msg;
	git_oid id;
	int err;

	memset(out, 0, sizeof(*out));
	lease__git_oid_to(&id, oid);
	if ((err = git_object_lookup(&obj, repo, &id, GIT_OBJECT_ANY)) < 0) {
		*what = err == GIT_ENOTFOUND ? "object missing" : "cannot read the object";
		return err;
	}
	lease__git_oid_from(&out->oid, git_object_id(obj));
	if (git_object_type(obj) == GIT_OBJECT_COMMIT) {
		c = (const git_commit *)obj;
		out->is_commit = 1;
		if (git_commit_parentcount(c) > 0) {
			out->has_parent = 1;
			lease__git_oid_from(&out->parent, git_commit_parent_id(c, 0));
		}
		out->time = (int64_t)git_commit_time(c);
		msg = git_commit_message_raw(c);
		if (!(out->message = strdup(msg ? msg : ""))) {
			*what = "out of memory";
			err = GIT_ERROR;
		}
	}
	git_object_free(obj);
	return err;
}

const char *lease__git_sep(void)
{
	const git_error *e = git_error_last();

	return e && e->message && *e->message ? ": " : "";
}

const char *lease__git_msg(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "";
}
