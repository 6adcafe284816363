# A git smart-HTTP server for the shell tests (sourced; not a test itself):
# lighttpd + git http-backend on 127.0.0.1, as in t_remote.sh.
#   git_http_start DIR [USERFILE]
#       serve the repositories under DIR at http://127.0.0.1:$GITSRV_PORT/git/
#       (receive-pack on); with USERFILE ("user:password" lines) every request
#       needs HTTP basic authentication. Sets GITSRV_PORT and GITSRV_PID; the
#       caller kills GITSRV_PID when done. Needs $TMPDIR.
#   git_daemon_start DIR REPO
#       git daemon serving the repositories under DIR at git://127.0.0.1:$GITD_PORT/
#       (receive-pack on), up once REPO (a path under DIR) answers ls-remote.
#       Sets GITD_PORT and GITD_PID; the caller kills GITD_PID when done.
git_http_start() {
  command -v lighttpd >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  gs_dir=$1 gs_users=${2:-}
  gs_base=$((21000 + $$ % 20000))
  GITSRV_PORT="" GITSRV_PID=""
  for gs_p in $gs_base $((gs_base + 1)) $((gs_base + 2)) $((gs_base + 3)) $((gs_base + 4)); do
    {
      echo "server.document-root = \"$gs_dir\""
      echo "server.bind = \"127.0.0.1\""
      echo "server.port = $gs_p"
      echo "server.errorlog = \"$TMPDIR/gitsrv.err\""
      echo 'server.modules = ("mod_alias", "mod_cgi", "mod_setenv", "mod_auth", "mod_authn_file")'
      echo 'alias.url = ("/git/" => "/usr/lib/git-core/git-http-backend/")'
      echo 'cgi.assign = ("" => "")'
      echo "setenv.add-environment = (\"GIT_PROJECT_ROOT\" => \"$gs_dir\", \"GIT_HTTP_EXPORT_ALL\" => \"1\")"
      if [ -n "$gs_users" ]; then
        echo 'auth.backend = "plain"'
        echo "auth.backend.plain.userfile = \"$gs_users\""
        echo 'auth.require = ("/git/" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))'
      fi
    } >"$TMPDIR/gitsrv.conf"
    lighttpd -D -f "$TMPDIR/gitsrv.conf" >"$TMPDIR/gitsrv.log" 2>&1 &
    GITSRV_PID=$!
    gs_i=0
    # up when it answers HTTP at all (401 with authentication)
    while [ $gs_i -lt 100 ]; do
      if curl -s -o /dev/null "http://127.0.0.1:$gs_p/git/"; then GITSRV_PORT=$gs_p; break; fi
      kill -0 "$GITSRV_PID" 2>/dev/null || break
      sleep 0.05
      gs_i=$((gs_i + 1))
    done
    [ -n "$GITSRV_PORT" ] && return 0
    kill "$GITSRV_PID" 2>/dev/null || true
    GITSRV_PID=""
  done
  echo "gitsrv: lighttpd did not start: $(cat "$TMPDIR/gitsrv.err" "$TMPDIR/gitsrv.log" 2>/dev/null)" >&2
  return 1
}

# shellcheck disable=SC2034  # GITD_PORT is the sourcing test's
git_daemon_start() {
  gd_dir=$1 gd_repo=$2
  gd_base=$((20000 + $$ % 20000))
  GITD_PORT="" GITD_PID=""
  for gd_p in $gd_base $((gd_base + 1)) $((gd_base + 2)) $((gd_base + 3)) $((gd_base + 4)); do
    git daemon --enable=receive-pack --export-all --reuseaddr --base-path="$gd_dir" \
      --listen=127.0.0.1 --port="$gd_p" "$gd_dir" >"$TMPDIR/daemon.log" 2>&1 &
    GITD_PID=$!
    gd_i=0
    while [ $gd_i -lt 100 ]; do
      if git ls-remote "git://127.0.0.1:$gd_p/$gd_repo" >/dev/null 2>&1; then GITD_PORT=$gd_p; return 0; fi
      kill -0 "$GITD_PID" 2>/dev/null || break
      sleep 0.05
      gd_i=$((gd_i + 1))
    done
    kill "$GITD_PID" 2>/dev/null || true
    GITD_PID=""
  done
  echo "gitsrv: git daemon did not start: $(cat "$TMPDIR/daemon.log" 2>/dev/null)" >&2
  return 1
}
