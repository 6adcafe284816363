#!/bin/sh
# test: seconds 20
# The Action on a release (issue 42), through tests/action/harness.mjs:
# 1. prebuilt first: with GITHUB_ACTION_REPOSITORY and GITHUB_SERVER_URL the
#    main stage downloads reflease-VERSION-linux-ARCH.tar.gz and SHA256SUMS
#    of release vVERSION (VERSION from the action's dist/VERSION) from a
#    loopback HTTP server (python3 -m http.server on 127.0.0.1), checks the
#    sha256, unpacks it under RUNNER_TOOL_CACHE and acquires with its
#    bin/reflease; the action's directory has no bundle and no build is run
#    (make and apt-get are failing shims); a second step reuses the unpacked
#    copy without a download; the tarball is the release layout (one top
#    directory reflease-VERSION-linux-ARCH/ with bin/reflease, lib/, share/,
#    README; make release builds the real one);
# 2. a tampered tarball (SHA256SUMS names another sum) is refused: exit 1, an
#    error naming the file and the checksum, nothing unpacked, nothing run;
# 3. no release (404: a branch or a commit) falls back to the cache/bundle;
# 4. input repository: the lease is written in OWNER/REPO of the fake GitHub
#    (another repository than GITHUB_REPOSITORY), and output acquired is true
#    for the holder, false for another job (exit 3);
# 5. the binary's stderr reaches the log as it comes (a wait's progress
#    lines), not at the end: a reflease that says a line, then waits 2 s;
#    run's command keeps its own stderr (its workflow commands are its own).
# shellcheck disable=SC2154 # root, log and ap come from action_lib.sh
set -eu
# shellcheck disable=SC1091 # sourced helper
. "$(dirname "$0")/action_lib.sh"
action_setup
command -v python3 >/dev/null 2>&1 || { echo "t_action_release: SKIP: no python3 for the release server"; exit 0; }
CANARY="ghs_RELEASEcanary0123456789abcdefCANARY"
hpid=""
trap 'action_cleanup; [ -z "$hpid" ] || kill "$hpid" 2>/dev/null || true' EXIT INT TERM
fakegh_start --token "$CANARY" --repo "$TMPDIR/gh.git" --owner infra --name locks
export GITHUB_API_URL="$base" GITHUB_GRAPHQL_URL="$base/graphql"

V=$(cat "$root/dist/VERSION")
case $(uname -m) in x86_64) A=x86_64 ;; aarch64 | arm64) A=aarch64 ;; *) echo "t_action_release: SKIP: no release build for $(uname -m)"; exit 0 ;; esac
top="reflease-$V-linux-$A"
# the action's directory as a runner checks out a tag: files, no build/bundle
ap="$TMPDIR/ap"
mkdir -p "$ap"
for f in action.yml action dist scripts Makefile mk lib cmd migrations; do ln -s "$root/$f" "$ap/$f"; done
rm "$ap/dist" && cp -R "$root/dist" "$ap/dist"
# failing shims: a build would be seen
shims="$TMPDIR/shims"
mkdir -p "$shims"
for c in make apt-get cc gcc; do printf '#!/bin/sh\necho "shim: %s $*" >>"%s/shims.log"\nexit 99\n' "$c" "$TMPDIR" >"$shims/$c"; chmod +x "$shims/$c"; done
export PATH="$shims:$PATH"

# the release: the tarball in the release layout, SHA256SUMS, served from loopback
srv="$TMPDIR/srv"
rel="$srv/octo/reflease/releases/download/v$V"
mkdir -p "$rel" "$TMPDIR/pkg/$top/bin" "$TMPDIR/pkg/$top/lib" "$TMPDIR/pkg/$top/share/doc/reflease"
cp "$REFLEASE" "$TMPDIR/pkg/$top/bin/reflease"
echo "reflease $V" >"$TMPDIR/pkg/$top/README"
tar -czf "$rel/$top.tar.gz" -C "$TMPDIR/pkg" "$top"
(cd "$rel" && sha256sum "$top.tar.gz" >SHA256SUMS)
python3 -u -m http.server --bind 127.0.0.1 --directory "$srv" 0 >"$TMPDIR/http.log" 2>&1 &
hpid=$!
i=0
while ! port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TMPDIR/http.log" | head -n 1) || [ -z "$port" ]; do
  [ $i -lt 400 ] || fail "the release server did not start: $(cat "$TMPDIR/http.log")"
  sleep 0.05; i=$((i + 1))
done
export GITHUB_SERVER_URL="http://127.0.0.1:$port" GITHUB_ACTION_REPOSITORY=octo/reflease
export RUNNER_TOOL_CACHE="$TMPDIR/toolcache"

# 1. prebuilt first
HARNESS_STATE=$TMPDIR/deploy.json act '{"command":"acquire","name":"deploy","ttl":"60","repository":"infra/locks"}'
expect 0 "acquire with the release's reflease"
like stdout "release $V \\($A\\) downloaded, sha256 verified against SHA256SUMS" "downloaded and verified"
like stdout 'set-up [0-9]+ ms \(release: download and sha256 [0-9]+ ms, unpack [0-9]+ ms; node.s start and loading [0-9]+ ms before\)' "set-up from the release, its phases"
echo "t_action_release: main stage from a release: $(q ms | cut -d. -f1) ms"
is outputs.status acquired "acquired on the release's binary"
is outputs.acquired true "output acquired: true for the holder"
[ -x "$RUNNER_TOOL_CACHE/reflease/$V/$A/$top/bin/reflease" ] || fail "not unpacked under RUNNER_TOOL_CACHE"
[ ! -e "$ap/build" ] || fail "a bundle was built"
[ ! -s "$TMPDIR/shims.log" ] || fail "a build was tried: $(cat "$TMPDIR/shims.log")"
# 4. the lease is in infra/locks of the fake, not in GITHUB_REPOSITORY (octo/leases)
git --git-dir="$TMPDIR/gh.git" rev-parse -q --verify refs/leases/deploy >/dev/null || fail "no refs/leases/deploy in infra/locks"
is state.repository infra/locks "the repository saved for the post stage"
GITHUB_RUN_ID=43 HARNESS_STATE=$TMPDIR/other.json act '{"command":"acquire","name":"deploy","ttl":"60","repository":"infra/locks"}'
expect 3 "another job: held"
is outputs.acquired false "output acquired: false on exit 3"
like stdout "already unpacked" "the second step reuses the unpacked release"
act '{"command":"status","name":"deploy"}'
[ "$st" -ne 0 ] || fail "status in GITHUB_REPOSITORY (octo/leases, not on the fake) succeeded"
act '{"command":"acquire","name":"deploy","repository":"infra/locks/x"}'
expect 64 "a repository that is not OWNER/REPO"
like annotations.0.message "repository must be OWNER/REPO, not 'infra/locks/x'" "said"
post "$TMPDIR/deploy.json"
expect 0 "post"
like stdout 'deploy released at the end of the job' "post released it in infra/locks"

# 2. a tampered tarball: refused, naming the file and the checksum; nothing unpacked
rm -rf "$RUNNER_TOOL_CACHE"
echo "tampered" >>"$TMPDIR/pkg/$top/README"
tar -czf "$rel/$top.tar.gz" -C "$TMPDIR/pkg" "$top"
act '{"command":"acquire","name":"tampered","ttl":"60","repository":"infra/locks"}'
expect 1 "a tampered tarball"
like annotations.0.message "^$top\\.tar\\.gz: checksum mismatch \\(sha256 [0-9a-f]{64}, SHA256SUMS says [0-9a-f]{64}\\): not used" "the file and the checksum named"
[ ! -e "$RUNNER_TOOL_CACHE/reflease/$V/$A/$top" ] || fail "a tampered tarball was unpacked"
git --git-dir="$TMPDIR/gh.git" rev-parse -q --verify refs/leases/tampered >/dev/null && fail "something ran"

# a local action (uses: ./, inside GITHUB_WORKSPACE) runs its own code: no download
GITHUB_WORKSPACE=$TMPDIR act '{"command":"status","name":"deploy","repository":"infra/locks"}'
unlike stdout "downloaded" "a local action downloads nothing"
like stdout "no cache service; building" "a local action without a bundle: a build"
like annotations.0.message "building reflease failed \\(action/build.sh exit 99" "the build's failure (make is a failing shim) said"

# 3. no release (404): the cache or the bundle, as before
action_dir "$TMPDIR/ap2"
ap="$TMPDIR/ap2"
GITHUB_ACTION_REPOSITORY=octo/none act '{"command":"status","name":"deploy","repository":"infra/locks"}'
expect 0 "no release: the bundle"
like stdout "no release v$V of octo/none to download" "the 404 said"
like stdout 'set-up [0-9]+ ms \(cache hit\)' "then the cache path"

# the guarded command's stdout and stderr stay its own: its workflow commands work as its own
export GITHUB_ACTION_REPOSITORY=''
printf 'echo "::notice title=from-cmd::hello from the command" >&2\n' >"$TMPDIR/notice.sh"
act "{\"command\":\"run\",\"name\":\"noticed\",\"ttl\":\"60\",\"repository\":\"infra/locks\",\"args\":\"sh $TMPDIR/notice.sh\"}"
expect 0 "run"
is annotations.0.title from-cmd "the command's own annotation"
is annotations.0.message "hello from the command" "its message"

# 5. stderr as it comes: a reflease that says a line, waits 2 s, then runs
rm "$ap/build/bundle/bin/reflease"
printf '#!/bin/sh\necho "reflease acquire: progress: waiting" >&2\nsleep 2\nexec "%s" "$@"\n' "$REFLEASE" >"$ap/build/bundle/bin/reflease"
chmod +x "$ap/build/bundle/bin/reflease"
(
  export GITHUB_ACTION_REPOSITORY='' INPUT_COMMAND=status INPUT_NAME=deploy INPUT_STORE=api INPUT_FAIR=false \
    INPUT_REPOSITORY=infra/locks INPUT_TOKEN=$CANARY GITHUB_OUTPUT="$TMPDIR/o" GITHUB_STATE="$TMPDIR/s" GITHUB_STEP_SUMMARY="$TMPDIR/m"
  node "$ap/dist/main.mjs" 2>&1 | while IFS= read -r l; do echo "$(date +%s%N) $l"; done >"$TMPDIR/stamped"
)
t1=$(grep 'progress: waiting' "$TMPDIR/stamped" | cut -d' ' -f1)
t2=$(tail -n 1 "$TMPDIR/stamped" | cut -d' ' -f1)
[ -n "$t1" ] || fail "the progress line did not reach the log: $(cat "$TMPDIR/stamped")"
[ $(((t2 - t1) / 1000000)) -ge 1500 ] || fail "the progress line came only at the end ($(((t2 - t1) / 1000000)) ms before)"

if grep -q "$CANARY" "$log" "$TMPDIR/stamped"; then fail "the GitHub token was printed"; fi
echo "t_action_release: ok"
