/*
 * Sets of leases on the command line (cmd_set.c; cli.md "Sets"): the names
 * of a set, and its result as JSON or human lines.
 */
#ifndef REFLEASE_CMD_SET_H
#define REFLEASE_CMD_SET_H

#include "cli.h"

/* Take the NAMEs from argv[optind_..argc): 1..LEASE_SET_MAX valid, distinct
 * names into @p names (borrowed from argv), their count into *@p n.
 * Returns 0 or cli_usage()'s negative status. */
int set_take_names(cli_ctx *ctx, int argc, char **argv, int optind_, const char **names, size_t *n);

/* The JSON object of a set's result (cli.md "Sets"): status, set: true,
 * names, members (each as a single lease's object), lease_token when the
 * caller holds the set, blocked_by, error or message. New reference. */
json_t *set_result_json(const lease_set_result *r);

/* Print @p r (JSON with --json, else a line per member and the token once),
 * the Action outputs status and lease-token, a failure on stderr; return the
 * exit status for @p rc. */
int set_finish(cli_ctx *ctx, lease_store *st, lease_set_result *r, int rc);

#endif
