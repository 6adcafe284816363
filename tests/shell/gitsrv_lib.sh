# A git smart-HTTP server for the shell tests (sourced; not a test itself):
# lighttpd + git http-backend on 127.0.0.1, as in t_remote.sh.
#   git_http_start DIR [USERFILE]
#       serve the repositories under DIR at http://127.0.0.1:$GITSRV_PORT/git/
#       (receive-pack on); with USERFILE ("user:password" lines) every request
#       needs HTTP basic authentication. Sets GITSRV_PORT and GITSRV_PID; the
#       caller kills GITSRV_PID when done. Needs $TMPDIR.
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
