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

/* Print @p r as human lines: `set of N: STATUS`, a line per member, and with
 * @p with_token the set's token once (a hand-over; a keeper's log leaves it
 * out). */
void set_print_human(const lease_set_result *r, int with_token);

/* The answer of a set lost under a keeper (`run`, `heartbeat --every`; cli.md
 * "Sets") that no set write gave: each member of @p names as `status` reads
 * it (with @p st NULL, the names only: the store is busy), the set's status,
 * code and message the loss's @p lr, blocked_by the member @p lr names. */
void set_lost_answer(lease_set_result *s, lease_store *st, const char *const *names, size_t n,
                     const lease_result *lr, int code);

/* Print @p r (JSON with --json, else a line per member and the token once),
 * the Action outputs status and lease-token, a failure on stderr; return the
 * exit status for @p rc. */
int set_finish(cli_ctx *ctx, lease_set_result *r, int rc);

#endif
