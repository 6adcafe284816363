// The Node client against the real binary (REFLEASE_BIN) on a local store,
// and on the project's fake GitHub server when REFLEASE_TEST_GITHUB is set
// (tests/shell/t_node_client.sh starts it: GITHUB_API_URL, the token, the
// repository). Run by t_node_client.sh with `node --test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Reflease, CASFailed, LeaseHeldError, NotHolderError, UsageError, ConfigurationError, InterruptedError,
  acquireLease, heartbeatLease, transitionLease, reacquireLease, releaseLease,
} from '../index.js';

const bin = process.env.REFLEASE_BIN;
assert.ok(bin, 'REFLEASE_BIN names the binary under test');
const tmp = mkdtempSync(join(process.env.TMPDIR || tmpdir(), 'node-client-'));
const store = join(tmp, 'store.git');
execFileSync(bin, ['init', store]);
const env = { GITHUB_ACTIONS: '', REFLEASE_LEASE_TOKEN: '' };
const alice = new Reflease({ binary: bin, store: `local:${store}`, owner: 'alice', host: 'h1', env });
const bob = new Reflease({ binary: bin, store: `local:${store}`, owner: 'bob', host: 'h2', env });
const HEX32 = /^[0-9a-f]{32}$/;

test('acquire, heartbeat, transition, release: typed results', async () => {
  const a = await alice.acquire('db', { ttl: 60 });
  assert.equal(a.status, 'acquired');
  assert.match(a.token, HEX32);
  assert.equal(a.lease.phase, 'claimed');
  assert.equal(a.exitCode, 0);
  const h = await alice.heartbeat('db', a.token, { ttl: 120 });
  assert.equal(h.status, 'renewed');
  assert.equal(h.token, a.token);
  const t = await alice.transition('db', a.token, 'working');
  assert.equal(t.status, 'transitioned');
  assert.equal(t.lease.phase, 'working');
  const s = await bob.status('db');
  assert.equal(s.status, 'live');
  assert.equal(s.lease.lease_token, undefined, 'status never shows the token');
  assert.equal(s.holder.owner, 'alice');
  const r = await alice.release('db', a.token);
  assert.equal(r.status, 'released');
  assert.equal((await alice.release('db', a.token)).status, 'already_released');
});

test('held is LeaseHeldError (a CASFailed) with the holder; not holder is NotHolderError', async () => {
  const a = await alice.acquire('held', { ttl: 60 });
  await assert.rejects(bob.acquire('held'), (e) => {
    assert.ok(e instanceof LeaseHeldError && e instanceof CASFailed);
    assert.equal(e.exitCode, 3);
    assert.equal(e.kind, 'held');
    assert.equal(e.result.status, 'held');
    assert.equal(e.result.holder.owner, 'alice');
    return true;
  });
  await assert.rejects(bob.heartbeat('held', '0'.repeat(32)), (e) => e instanceof NotHolderError && e.exitCode === 4);
  await assert.rejects(bob.status('held', { failIfHeld: true }), LeaseHeldError);
  assert.equal((await alice.status('held', { failIfHeld: true })).status, 'live');
  await alice.release('held', a.token);
});

test('usage and configuration errors are typed and name what is wrong', async () => {
  await assert.rejects(alice.acquire('bad name'), (e) => e instanceof UsageError && /invalid lease name/.test(e.message));
  const nowhere = new Reflease({ binary: bin, store: `local:${join(tmp, 'missing')}`, env });
  await assert.rejects(nowhere.status('x'), (e) => e.exitCode === 78 && e instanceof ConfigurationError);
  const missing = new Reflease({ binary: join(tmp, 'no-such-binary'), env });
  await assert.rejects(missing.list(), (e) => e.kind === 'spawn');
});

test('the token travels in the environment, never on a command line', async () => {
  // a wrapper that records its argv and environment
  const rec = join(tmp, 'rec.sh');
  writeFileSync(rec, `#!/bin/sh\nprintf '%s\\n' "$@" >"${tmp}/argv"\nprintf '%s\\n' "$REFLEASE_LEASE_TOKEN" >"${tmp}/token"\nexec "${bin}" "$@"\n`, { mode: 0o755 });
  const c = new Reflease({ binary: rec, store: `local:${store}`, owner: 'alice', host: 'h1', env });
  const a = await c.acquire('tok', { ttl: 60 });
  await c.heartbeat('tok', a.token);
  assert.ok(!readFileSync(join(tmp, 'argv'), 'utf8').includes(a.token), 'token on argv');
  assert.equal(readFileSync(join(tmp, 'token'), 'utf8').trim(), a.token);
  await c.release('tok', a.token);
});

test('a set: one token, every member, blocked_by', async () => {
  const s = await alice.acquire(['s1', 's2'], { ttl: 60 });
  assert.equal(s.set, true);
  assert.equal(s.members.length, 2);
  assert.match(s.token, HEX32);
  await assert.rejects(bob.acquire(['s2', 's3']), (e) => e instanceof LeaseHeldError && e.result.blocked_by === 's2');
  assert.equal((await alice.release(['s1', 's2'], s.token)).status, 'released');
});

test('list, reconcile (found), migrate', async () => {
  const l = await alice.list();
  assert.equal(l.namespace, 'leases');
  assert.ok(l.leases.some((x) => x.name === 'db' && x.status === 'released'));
  const r = await alice.reconcile();
  assert.equal(typeof r.scanned, 'number');
  assert.equal(r.found, false);
  const m = await alice.migrate();
  assert.equal(m.applied, false);
  assert.equal(m.found, false);
  // a ref whose payload names another lease: name-mismatch (error): exit 1 is a result
  execFileSync('git', ['--git-dir', store, 'update-ref', 'refs/leases/impostor', (await alice.status('db')).oid]);
  const f = await alice.reconcile();
  assert.equal(f.found, true);
  assert.equal(f.exitCode, 1);
  assert.ok(f.leases.some((x) => x.anomalies.some((an) => an.id === 'name-mismatch')));
  execFileSync('git', ['--git-dir', store, 'update-ref', '-d', 'refs/leases/impostor']);
});

test('run with a command: held while it runs, CMD status is its own', async () => {
  const r = await alice.run('job', ['sh', '-c', 'exit 7'], { ttl: 60, stdio: ['ignore', 'ignore', 'pipe'] });
  assert.equal(r.reason, 'exited');
  assert.equal(r.command.exit_code, 7);
  assert.equal(r.exitCode, 7);
  assert.equal(r.status, 'released');
  const a = await bob.acquire('busy', { ttl: 60 });
  await assert.rejects(alice.run('busy', ['true'], { ttl: 60 }), LeaseHeldError);
  // with --conflict-exit-code: still a LeaseHeldError, its exitCode the one asked for
  await assert.rejects(alice.run('busy', ['true'], { ttl: 60, conflictExitCode: 42 }), (e) => e instanceof LeaseHeldError && e.exitCode === 42);
  await bob.release('busy', a.token);
});

test('run with a function: a keeper child heartbeats; aborted when the lease is lost', async () => {
  const v = await alice.run('fn', async ({ token, signal }) => {
    assert.match(token, HEX32);
    assert.equal(signal.aborted, false);
    assert.equal((await bob.status('fn')).status, 'live');
    return 42;
  }, { ttl: 6, every: 1 });
  assert.equal(v, 42);
  assert.equal((await bob.status('fn')).status, 'released');
  // the lease broken and taken under the function: its signal aborts with NotHolderError
  await assert.rejects(alice.run('lost', async ({ signal }) => {
    await bob.breakLease('lost', { force: true });
    await bob.acquire('lost', { ttl: 60 });
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    assert.ok(signal.reason instanceof NotHolderError);
    return 'late';
  }, { ttl: 6, every: 1 }), NotHolderError);
  assert.equal((await bob.status('lost')).holder.owner, 'bob', 'the new holder keeps it');
});

test('keep: a background heartbeat child, stopped by AbortSignal (143)', async () => {
  const a = await alice.acquire('kept', { ttl: 6 });
  const ac = new AbortController();
  const beats = [];
  const k = alice.keep('kept', a.token, { every: 1, signal: ac.signal, onBeat: (b) => beats.push(b) });
  assert.ok(k.pid > 0);
  const cmdline = readFileSync(`/proc/${k.pid}/cmdline`, 'utf8');
  assert.ok(!cmdline.includes(a.token), 'token on the keeper command line');
  while (beats.length < 1) await new Promise((r) => setTimeout(r, 100));
  assert.equal(beats[0].status, 'renewed');
  ac.abort();
  assert.equal(await k.done, 143);
  await alice.release('kept', a.token);
});

test('keep without every: the renewal point (heartbeat --every auto), not one heartbeat', async () => {
  const a = await alice.acquire('kept-auto', { ttl: 60 });
  const k = alice.keep('kept-auto', a.token);
  const argv = readFileSync(`/proc/${k.pid}/cmdline`, 'utf8').split('\0');
  assert.deepEqual(argv.slice(argv.indexOf('heartbeat')), ['heartbeat', '--every', 'auto', '--', 'kept-auto', '']);
  // still keeping after a one-shot heartbeat would have ended
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(k.child.exitCode, null, `the keeper ended: ${k.stderr()}`);
  assert.equal(await k.stop(), 143);
  await alice.release('kept-auto', a.token);
});

test('an AbortSignal ends a wait: InterruptedError, the holder keeps it', async () => {
  const a = await bob.acquire('wait', { ttl: 60 });
  const ac = new AbortController();
  const lines = [];
  const p = alice.acquire('wait', { wait: 30, signal: ac.signal, onStderr: (l) => lines.push(l) });
  setTimeout(() => ac.abort(), 500);
  await assert.rejects(p, (e) => e instanceof InterruptedError && e.exitCode === 143);
  assert.equal((await alice.status('wait')).holder.owner, 'bob');
  await bob.release('wait', a.token);
});

test('the seed library names: acquireLease ... CASFailed', async () => {
  const lease = await acquireLease('seed', { client: alice, ttl: 60 });
  assert.equal(lease.name, 'seed');
  assert.match(lease.token, HEX32);
  await assert.rejects(acquireLease('seed', { client: bob }), CASFailed);
  const hb = await heartbeatLease(lease, { client: alice, ttl: 90 });
  assert.equal(hb.token, lease.token);
  const tr = await transitionLease(hb, 'review', { client: alice });
  assert.equal(tr.phase, 'review');
  const re = await reacquireLease(tr, { client: alice });
  assert.equal(re.result.status, 'reacquired');
  await assert.rejects(heartbeatLease({ name: 'seed', token: 'f'.repeat(32) }, { client: alice }), CASFailed);
  assert.equal((await releaseLease(re, { client: alice })).status, 'released');
});

test('github: the fake GitHub server', { skip: !process.env.REFLEASE_TEST_GITHUB }, async () => {
  const gh = (owner) => new Reflease({
    binary: bin, store: `github:${process.env.REFLEASE_TEST_GITHUB}`, owner, host: 'runner',
    githubToken: process.env.REFLEASE_TEST_GITHUB_TOKEN, env: { ...env, GITHUB_TOKEN: '', REFLEASE_GITHUB_TOKEN: '' },
  });
  const a = await gh('alice').acquire('gh', { ttl: 60 });
  assert.equal(a.status, 'acquired');
  await assert.rejects(gh('bob').acquire('gh', { ttl: 60 }), LeaseHeldError);
  assert.equal((await gh('alice').heartbeat('gh', a.token, { ttl: 90 })).status, 'renewed');
  assert.equal((await gh('bob').status('gh')).status, 'live');
  const s = await gh('alice').acquire(['gh1', 'gh2'], { ttl: 60 });
  assert.equal(s.set, true);
  assert.equal((await gh('alice').release(['gh1', 'gh2'], s.token)).status, 'released');
  assert.equal((await gh('alice').release('gh', a.token)).status, 'released');
  // the client adds no request to the binary's: an acquire and a release cost what the CLI's cost
  const stats = async () => (await (await fetch(`${process.env.GITHUB_API_URL}/_fakegh/stats`)).json()).total;
  const cliEnv = { ...process.env, REFLEASE_GITHUB_TOKEN: process.env.REFLEASE_TEST_GITHUB_TOKEN, REFLEASE_OWNER: 'carol', REFLEASE_HOST: 'runner', GITHUB_ACTIONS: '', REFLEASE_STORE: `github:${process.env.REFLEASE_TEST_GITHUB}` };
  let n0 = await stats();
  const tok = execFileSync(bin, ['acquire', 'by-cli', '--ttl', '60', '--print-token'], { env: cliEnv }).toString().trim();
  execFileSync(bin, ['release', 'by-cli'], { env: { ...cliEnv, REFLEASE_LEASE_TOKEN: tok } });
  const cliCost = (await stats()) - n0;
  n0 = await stats();
  const c = gh('carol');
  await c.release('by-client', (await c.acquire('by-client', { ttl: 60 })).token);
  assert.equal((await stats()) - n0, cliCost, 'requests of acquire + release through the client');
  assert.ok(cliCost > 0);
  const wrong = new Reflease({ binary: bin, store: `github:${process.env.REFLEASE_TEST_GITHUB}`, githubToken: 'ghs_wrong', env: { ...env, GITHUB_TOKEN: '', REFLEASE_GITHUB_TOKEN: '' } });
  await assert.rejects(wrong.status('gh'), (e) => e.exitCode === 77 && e.kind === 'permission' && !e.message.includes('ghs_wrong'));
});
