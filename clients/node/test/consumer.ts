// A consumer of the package, type-checked by `tsc -p test/tsconfig.json`
// (t_node_client.sh): the names and result types a TypeScript program uses,
// and what the types refuse (@ts-expect-error lines fail the check when the
// types would accept them).
import {
  Reflease, CASFailed, LeaseHeldError, RefleaseError, EXIT,
  acquireLease, heartbeatLease, transitionLease, reacquireLease, releaseLease,
  type LeaseResult, type SetResult, type StatusResult, type ListResult, type ReconcileResult,
  type MigrateResult, type RunResult, type Lease, type HistoryResult,
} from 'reflease';

async function main(): Promise<void> {
  const c = new Reflease({ store: 'local:/tmp/s', namespace: 'leases', onStderr: (l: string) => console.error(l) });
  const a: LeaseResult = await c.acquire('db', { ttl: 60, wait: 'forever', fair: true });
  const token: string | undefined = a.token;
  const exp: string | undefined = a.lease?.expires_at;
  const set: LeaseResult | SetResult = await c.acquire(['a', 'b'], { ttl: 60 });
  if ('set' in set) {
    const members: LeaseResult[] = set.members;
    const by: string | undefined = set.blocked_by;
    void members; void by;
  }
  const st: StatusResult = await c.status('db', { failIfHeld: true });
  const live: boolean = st.status === 'live';
  const list: ListResult = await c.list();
  const first: string | undefined = list.leases[0]?.name;
  const rec: ReconcileResult = await c.reconcile({ reap: true, failOn: 'warning' });
  const found: boolean = rec.found || rec.counts.error > 0;
  const mig: MigrateResult = await c.migrate({ apply: false });
  const hist: HistoryResult = await c.history('db', { max: 5 });
  const run: RunResult = await c.run('db', ['make', 'deploy'], { ttl: 300, conflictExitCode: 1 });
  const code: number | null | undefined = run.command?.exit_code;
  const n: number = await c.run('db', async ({ token: t, signal }) => (signal.aborted ? 0 : t.length), { ttl: 60 });
  const k = c.keep('db', token ?? '', { every: 20, signal: AbortSignal.timeout(1000) });
  const ended: number = await k.done;
  const auto = c.keep('db', token ?? '', { every: 'auto' });
  await auto.stop();
  // @ts-expect-error: every is seconds or 'auto'
  c.keep('db', token ?? '', { every: 'often' });
  await c.release('db', token ?? '', { strict: true });
  try {
    await c.acquire('db');
  } catch (e) {
    if (e instanceof LeaseHeldError) console.log(e.result?.status, e.exitCode === EXIT.HELD);
    else if (e instanceof RefleaseError) console.log(e.kind, e.stderr);
  }
  // the seed library's names
  const lease: Lease = await acquireLease('db', { ttl: 60, client: c });
  const renewed: Lease = await heartbeatLease(lease);
  const moved: Lease = await transitionLease(renewed, 'working');
  const back: Lease = await reacquireLease(moved, { ttl: 120 });
  try {
    await releaseLease(back);
  } catch (e) {
    if (e instanceof CASFailed) console.log('lost the race');
  }
  // @ts-expect-error a phase the CLI refuses (released is reached by release)
  await c.transition('db', 'tok', 'released');
  // @ts-expect-error ttl is seconds, a number
  await c.acquire('db', { ttl: '60' });
  // @ts-expect-error a token is required to heartbeat
  await c.heartbeat('db');
  void exp; void live; void first; void found; void mig; void hist; void code; void n; void ended;
}
void main;
