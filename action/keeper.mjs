// The Action's background keeper (bundled as dist/keeper.mjs): started
// detached by the main stage after an acquire with heartbeat true
// (action/lib.mjs startKeeper). It runs `reflease heartbeat NAME... --every
// auto` (the library's renewal point: the store's pace, 375 s on github: at the
// default TTL 450; issue 39) through the Node client's keep() (the token in its environment, never
// on its command line), writes the heartbeat's pid to BASE.pid and, when it
// ends, its exit status to BASE.rc: 143 when a release step or the post stage
// stopped it (SIGTERM), 4 when the lease was lost, the failure's status
// otherwise. Its output goes to BASE.log (its stdout and stderr).
import { renameSync, writeFileSync } from 'node:fs';
import { Reflease } from '../clients/node/index.js';

const spec = JSON.parse(process.env.REFLEASE_KEEPER || '{}');
const token = process.env.REFLEASE_KEEPER_TOKEN || '';
delete process.env.REFLEASE_KEEPER_TOKEN;
const put = (f, v) => {
  writeFileSync(`${spec.base}.${f}.tmp`, `${v}\n`);
  renameSync(`${spec.base}.${f}.tmp`, `${spec.base}.${f}`);
};
const client = new Reflease({ ...spec.options, binary: spec.binary });
const k = client.keep(spec.names, token, { ttl: spec.ttl || undefined, every: 'auto', stdio: ['ignore', 'inherit', 'inherit'] });
// a signal to this wrapper reaches the heartbeat (which then ends 128 + signal)
for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => k.stop(s));
put('pid', k.pid);
k.done.then((rc) => put('rc', rc), (e) => {
  process.stderr.write(`${e.message}\n`);
  put('rc', 127);
});
