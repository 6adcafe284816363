import{createRequire as __reflease_cr}from'node:module';const require=__reflease_cr(import.meta.url);

// action/keeper.mjs
import { renameSync, writeFileSync } from "node:fs";

// clients/node/index.js
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
var EXIT = Object.freeze({
  OK: 0,
  FOUND: 1,
  HELD: 3,
  NOT_HOLDER: 4,
  USAGE: 64,
  DATA: 65,
  UNAVAILABLE: 69,
  SOFTWARE: 70,
  IO: 74,
  TEMPORARY: 75,
  PERMISSION: 77,
  CONFIGURATION: 78,
  SIGHUP: 129,
  SIGINT: 130,
  SIGTERM: 143
});
var RefleaseError = class extends Error {
  constructor(message, { exitCode = null, result = null, stderr = "", command = "", kind = "error" } = {}) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.result = result;
    this.stderr = stderr;
    this.command = command;
    this.kind = kind;
  }
};
var CASFailed = class extends RefleaseError {
};
var LeaseHeldError = class extends CASFailed {
};
var NotHolderError = class extends CASFailed {
};
var UsageError = class extends RefleaseError {
};
var DataError = class extends RefleaseError {
};
var UnavailableError = class extends RefleaseError {
};
var InternalError = class extends RefleaseError {
};
var OutputError = class extends RefleaseError {
};
var TemporaryError = class extends RefleaseError {
};
var PermissionError = class extends RefleaseError {
};
var ConfigurationError = class extends RefleaseError {
};
var InterruptedError = class extends RefleaseError {
};
var BY_STATUS = {
  3: [LeaseHeldError, "held"],
  4: [NotHolderError, "not_holder"],
  64: [UsageError, "usage"],
  65: [DataError, "data"],
  69: [UnavailableError, "unavailable"],
  70: [InternalError, "internal"],
  74: [OutputError, "output"],
  75: [TemporaryError, "temporary"],
  77: [PermissionError, "permission"],
  78: [ConfigurationError, "configuration"]
};
function errorFor(code, { result = null, stderr = "", command = "", message = "" } = {}) {
  const lastLine = String(stderr).split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("::")).pop();
  const why = message || result?.message || result?.error?.message || lastLine || `exit status ${code}`;
  const text = `reflease ${command}: ${why}`;
  if (code !== null && code > 128) return new InterruptedError(text, { exitCode: code, result, stderr, command, kind: "interrupted" });
  const [Cls, kind] = BY_STATUS[code] || [RefleaseError, "error"];
  return new Cls(text, { exitCode: code, result, stderr, command, kind });
}
var SIGNO = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
var names = (n) => (Array.isArray(n) ? [...n] : [n]).map(String);
var seconds = (v) => v === "forever" || v === Infinity ? "forever" : String(v);
function opt(argv, flag, v, f = String) {
  if (v !== void 0 && v !== null && v !== false && v !== "") argv.push(flag, ...v === true ? [] : [f(v)]);
}
var Reflease = class {
  constructor(options = {}) {
    this.options = { ...options };
    this.binary = options.binary || process.env.REFLEASE_BIN || "reflease";
  }
  /** The child's environment: the caller's, `env`, the tokens; outputs and summaries are the caller's to write. */
  #env(token2, extra) {
    const o = this.options;
    const env = { ...process.env, ...o.env || {}, ...this.#globalEnv(), ...extra || {} };
    delete env.REFLEASE_LEASE_TOKEN;
    if (token2) env.REFLEASE_LEASE_TOKEN = token2;
    if (o.githubToken) env.REFLEASE_GITHUB_TOKEN = o.githubToken;
    if (o.gitToken) env.REFLEASE_GIT_TOKEN = o.gitToken;
    if (!o.githubOutputs) {
      env.GITHUB_OUTPUT = "";
      env.GITHUB_STEP_SUMMARY = "";
    }
    return env;
  }
  /** The global options (cli.md "Shape") as the variables the binary reads: argv stays the command's. */
  #globalEnv() {
    const o = this.options;
    const env = {};
    const set = (k2, v) => {
      if (v !== void 0 && v !== null && v !== "") env[k2] = String(v);
    };
    set("REFLEASE_STORE", o.store);
    set("REFLEASE_NAMESPACE", o.namespace);
    set("REFLEASE_OWNER", o.owner);
    set("REFLEASE_HOST", o.host);
    set("REFLEASE_TIMEOUT", o.timeout);
    set("REFLEASE_VERIFY_TIMEOUT", o.verifyTimeout);
    if (o.verbose) env.REFLEASE_LOG = o.verbose > 1 ? "debug" : "info";
    if (o.quiet) env.REFLEASE_LOG = "error";
    return env;
  }
  /**
   * Spawn `reflease [global] ARGS` and resolve to { code, signal, stdout,
   * stderr }. stderr lines reach `onStderr` (call's, else the client's) as
   * they come. `signal` (AbortSignal) sends SIGTERM: reflease then ends its
   * wait or releases (cli.md: 143).
   */
  spawn(args, { token: token2, signal, onStderr, stdio, json = true, env } = {}) {
    const cut = args.indexOf("--");
    const argv = !json ? [...args] : cut < 0 ? [...args, "--json"] : [...args.slice(0, cut), "--json", ...args.slice(cut)];
    const lineCb = onStderr || this.options.onStderr;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(errorFor(130, { command: args[0], message: "aborted before it started" }));
      const child = spawn(this.binary, argv, {
        env: this.#env(token2, env),
        cwd: this.options.cwd,
        stdio: stdio || ["ignore", "pipe", "pipe"]
      });
      let stdout = "";
      let stderr = "";
      let pending = "";
      child.stdout?.setEncoding("utf8").on("data", (d) => stdout += d);
      child.stderr?.setEncoding("utf8").on("data", (d) => {
        stderr += d;
        if (!lineCb) return;
        pending += d;
        let i;
        while ((i = pending.indexOf("\n")) >= 0) {
          lineCb(pending.slice(0, i));
          pending = pending.slice(i + 1);
        }
      });
      const abort = () => child.kill("SIGTERM");
      signal?.addEventListener("abort", abort, { once: true });
      child.on("error", (e) => {
        signal?.removeEventListener("abort", abort);
        reject(new RefleaseError(`reflease ${args[0]}: cannot run ${this.binary}: ${e.message}`, { command: args[0], kind: "spawn" }));
      });
      child.on("close", (code, sig) => {
        signal?.removeEventListener("abort", abort);
        if (lineCb && pending) lineCb(pending);
        resolve({ code: code ?? 128 + (SIGNO[sig] || 15), signal: sig, stdout, stderr, pid: child.pid });
      });
    });
  }
  /** Run one command with --json: its parsed object, or a typed error. `ok` lists the statuses that are results. */
  async #call(args, { ok = [0], token: token2, signal, onStderr } = {}) {
    const r = await this.spawn(args, { token: token2, signal, onStderr });
    let result = null;
    const text = r.stdout.trim();
    if (text) {
      try {
        result = JSON.parse(text);
      } catch {
        throw new RefleaseError(
          `reflease ${args[0]}: not one JSON object on stdout: ${text.slice(0, 200)}`,
          { exitCode: r.code, stderr: r.stderr, command: args[0], kind: "protocol" }
        );
      }
    }
    if (!ok.includes(r.code)) throw errorFor(r.code, { result, stderr: r.stderr, command: args[0] });
    if (result === null) throw new RefleaseError(`reflease ${args[0]}: no JSON result (exit ${r.code})`, { exitCode: r.code, stderr: r.stderr, command: args[0], kind: "protocol" });
    Object.defineProperty(result, "exitCode", { value: r.code, enumerable: false });
    return withToken(result);
  }
  acquire(name, o = {}) {
    const a = ["acquire"];
    opt(a, "--ttl", o.ttl);
    opt(a, "--phase", o.phase);
    opt(a, "--wait", o.wait, seconds);
    opt(a, "--fair", o.fair);
    opt(a, "--slots", o.slots);
    return this.#call([...a, "--", ...names(name)], o);
  }
  heartbeat(name, token2, o = {}) {
    const a = ["heartbeat"];
    opt(a, "--ttl", o.ttl);
    return this.#call([...a, "--", ...names(name)], { ...o, token: token2 });
  }
  transition(name, token2, to, o = {}) {
    return this.#call(["transition", "--to", String(to), "--", ...names(name)], { ...o, token: token2 });
  }
  reacquire(name, token2, o = {}) {
    const a = ["reacquire"];
    opt(a, "--ttl", o.ttl);
    return this.#call([...a, "--", String(name)], { ...o, token: token2 });
  }
  release(name, token2, o = {}) {
    const a = ["release"];
    opt(a, "--strict", o.strict);
    return this.#call([...a, "--", ...names(name)], { ...o, token: token2 });
  }
  breakLease(name, o = {}) {
    const a = ["break"];
    opt(a, "--force", o.force);
    return this.#call([...a, "--", String(name)], o);
  }
  status(name, o = {}) {
    const a = ["status"];
    opt(a, "--fail-if-held", o.failIfHeld);
    return this.#call([...a, "--", String(name)], o);
  }
  list(o = {}) {
    return this.#call(["list"], o);
  }
  history(name, o = {}) {
    const a = ["history"];
    opt(a, "--max", o.max);
    opt(a, "--assumed-ttl", o.assumedTtl);
    return this.#call([...a, "--", String(name)], o);
  }
  /** reconcile: exit 1 (found at or above failOn) is a result with found: true. */
  async reconcile(o = {}) {
    const a = ["reconcile"];
    opt(a, "--reap", o.reap);
    opt(a, "--prune-released", o.pruneReleased);
    opt(a, "--fail-on", o.failOn);
    opt(a, "--summary", o.summary);
    opt(a, "--grace", o.grace);
    opt(a, "--assumed-ttl", o.assumedTtl);
    const r = await this.#call(a, { ...o, ok: [0, 1] });
    r.found = r.exitCode === 1;
    return r;
  }
  /** migrate: a plan unless apply; exit 1 (found) is a result with found: true. */
  async migrate(o = {}) {
    const a = ["migrate"];
    opt(a, "--apply", o.apply);
    opt(a, "--to", o.to);
    opt(a, "--assumed-ttl", o.assumedTtl);
    opt(a, "--fail-on", o.failOn);
    opt(a, "--summary", o.summary);
    const r = await this.#call(a, { ...o, ok: [0, 1] });
    r.found = r.exitCode === 1;
    return r;
  }
  /**
   * Keep a held lease (or set) alive in the background: `reflease heartbeat
   * --every S` as a child process, the token in its environment. Without
   * `every` (or with 'auto') it renews at the library's renewal point
   * (`--every auto`, protocol.md §6: the store's pace, 375 s on github: at
   * the default TTL 450, or earlier when the time left calls for it). Each write's
   * JSON object reaches `onBeat`. The keeper ends on stop() (SIGTERM: 143),
   * on `signal`, or by itself when the lease is lost (4, or the failure's
   * status); `done` resolves to that exit status. `detached` starts it in its
   * own session (it outlives this process; `stdio` then names where its
   * output goes).
   */
  keep(name, token2, o = {}) {
    const a = ["heartbeat"];
    opt(a, "--ttl", o.ttl);
    opt(a, "--every", o.every ?? "auto");
    opt(a, "--release-on-exit", o.releaseOnExit);
    if (o.onBeat) a.push("--json");
    a.push("--", ...names(name));
    const child = spawn(this.binary, a, {
      env: this.#env(token2, o.env),
      cwd: this.options.cwd,
      detached: !!o.detached,
      stdio: o.stdio || ["ignore", "pipe", "pipe"]
    });
    let buf = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          if (line.trim() && o.onBeat) o.onBeat(JSON.parse(line));
        } catch {
        }
      }
    });
    child.stderr?.setEncoding("utf8").on("data", (d) => {
      stderr += d;
      if (o.onStderr) {
        for (const l of d.split("\n")) if (l) o.onStderr(l);
      }
    });
    const done = new Promise((resolve, reject) => {
      child.on("error", (e) => reject(new RefleaseError(`reflease heartbeat: cannot run ${this.binary}: ${e.message}`, { command: "heartbeat", kind: "spawn" })));
      child.on("close", (code, sig) => resolve(code ?? 128 + (SIGNO[sig] || 15)));
    });
    const stop = (sig = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
      return done;
    };
    o.signal?.addEventListener("abort", () => stop(), { once: true });
    return { pid: child.pid, child, done, stop, stderr: () => stderr };
  }
  /**
   * run NAME(S): with a command (an argv array), `reflease run ... -- CMD`:
   * the lease is held while CMD runs and released after (cli.md); resolves to
   * run's JSON object (reason exited: CMD's own status in command.exit_code,
   * whatever it was), throws a typed error when not acquired, lost,
   * interrupted or the release failed. With a function, the lease is
   * acquired, kept by a background keeper child (keep(): at the renewal
   * point unless `every` is given), and the function
   * called with { token, signal, result }: `signal` aborts when the lease is
   * lost; released afterwards (also when the function throws).
   */
  async run(name, what, o = {}) {
    if (typeof what === "function") return this.#runFunction(name, what, o);
    if (!Array.isArray(what) || what.length === 0) throw new UsageError('reflease run: the command is an argv array, e.g. ["make", "deploy"]', { command: "run", kind: "usage" });
    const dir = mkdtempSync(join(tmpdir(), "reflease-run-"));
    const file = join(dir, "result.json");
    try {
      const a = ["run"];
      opt(a, "--ttl", o.ttl);
      opt(a, "--every", o.every);
      opt(a, "--wait", o.wait, seconds);
      opt(a, "--fair", o.fair);
      opt(a, "--slots", o.slots);
      opt(a, "--conflict-exit-code", o.conflictExitCode);
      a.push("--json-file", file, "--", ...names(name), "--", ...what.map(String));
      const r = await this.spawn(a, { signal: o.signal, onStderr: o.onStderr, json: false, stdio: o.stdio || ["ignore", "inherit", "pipe"] });
      let result = null;
      try {
        result = JSON.parse(readFileSync(file, "utf8"));
      } catch {
      }
      const cmdRan = result && result.reason === "exited";
      const releaseFailed = cmdRan && result.status !== "released" && r.code !== (result.command?.exit_code ?? -1);
      if (result && cmdRan && !releaseFailed) {
        Object.defineProperty(result, "exitCode", { value: r.code, enumerable: false });
        return result;
      }
      let code = r.code;
      if (o.conflictExitCode && r.code === Number(o.conflictExitCode)) {
        if (result?.reason === "lost") code = EXIT.NOT_HOLDER;
        else if (result?.reason === "not_acquired" || result?.status === "held") code = EXIT.HELD;
      }
      const e = errorFor(code, { result, stderr: r.stderr, command: "run" });
      e.exitCode = r.code;
      throw e;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  async #runFunction(name, fn, o) {
    const got = await this.acquire(name, o);
    const ac = new AbortController();
    const keeper = this.keep(name, got.token, { ttl: o.ttl, every: o.every, onStderr: o.onStderr });
    let lost = null;
    keeper.done.then((code) => {
      if (code !== 143) {
        lost = errorFor(code === 0 ? 4 : code, { stderr: keeper.stderr(), command: "heartbeat" });
        ac.abort(lost);
      }
    });
    o.signal?.addEventListener("abort", () => ac.abort(o.signal.reason), { once: true });
    try {
      const value = await fn({ token: got.token, signal: ac.signal, result: got });
      if (lost) throw lost;
      return value;
    } finally {
      await keeper.stop();
      if (!lost) await this.release(name, got.token);
    }
  }
};
function withToken(r) {
  if (r && typeof r === "object" && !("token" in r)) {
    const t = r.lease_token || r.lease?.lease_token;
    if (t) Object.defineProperty(r, "token", { value: t, enumerable: false });
  }
  return r;
}

// action/keeper.mjs
var spec = JSON.parse(process.env.REFLEASE_KEEPER || "{}");
var token = process.env.REFLEASE_KEEPER_TOKEN || "";
delete process.env.REFLEASE_KEEPER_TOKEN;
var put = (f, v) => {
  writeFileSync(`${spec.base}.${f}.tmp`, `${v}
`);
  renameSync(`${spec.base}.${f}.tmp`, `${spec.base}.${f}`);
};
var client = new Reflease({ ...spec.options, binary: spec.binary });
var k = client.keep(spec.names, token, { ttl: spec.ttl || void 0, every: "auto", stdio: ["ignore", "inherit", "inherit"] });
for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => k.stop(s));
put("pid", k.pid);
k.done.then((rc) => put("rc", rc), (e) => {
  process.stderr.write(`${e.message}
`);
  put("rc", 127);
});
