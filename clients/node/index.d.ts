// Types of the reflease Node client (index.js) and of every JSON result the
// reflease binary documents (docs/cli.md "JSON output", "Sets").

/** The exit statuses of docs/cli.md "Exit status". */
export declare const EXIT: Readonly<{
  OK: 0; FOUND: 1; HELD: 3; NOT_HOLDER: 4; USAGE: 64; DATA: 65; UNAVAILABLE: 69; SOFTWARE: 70;
  IO: 74; TEMPORARY: 75; PERMISSION: 77; CONFIGURATION: 78; SIGHUP: 129; SIGINT: 130; SIGTERM: 143;
}>;

export type Phase = 'claimed' | 'working' | 'review' | 'released';
/** An RFC 3339 UTC time, e.g. "2026-12-05T08:39:09Z". */
export type Timestamp = string;

/** A lease's payload (protocol.md §2); lease_token only for the caller that holds it. */
export interface LeasePayload {
  sdlc_version: string;
  name: string;
  owner: string;
  host: string;
  phase: Phase;
  transitions: number;
  acquired_at: Timestamp;
  expires_at: Timestamp;
  nonce: string;
  /** seconds until expires_at, negative when past (not in history items) */
  expires_in?: number;
  ttl_seconds?: number;
  heartbeats?: number;
  previous_heartbeat_at?: Timestamp;
  queued_at?: Timestamp;
  queue_position?: number;
  lease_token?: string;
}

export interface Holder { owner: string; host: string; expires_at: Timestamp; }
export interface ErrorInfo { code: string; message: string; }

export type LeaseStatus =
  | 'acquired' | 'already_held' | 'reacquired' | 'renewed' | 'not_due' | 'transitioned'
  | 'released' | 'already_released' | 'not_owner' | 'broken' | 'held' | 'not_holder'
  | 'expired' | 'error';

/** The result of a lease command (acquire, heartbeat, transition, reacquire, release, break) on one lease. */
export interface LeaseResult {
  status: LeaseStatus;
  name: string;
  ref: string;
  oid?: string;
  token_rotated?: boolean;
  lease?: LeasePayload;
  holder?: Holder;
  message?: string;
  error?: ErrorInfo;
  /** acquire --fair: store seconds from the first ticket to the acquire */
  waited_seconds?: number;
  /** the lease token, for the holder (lease.lease_token) */
  readonly token?: string;
  /** the binary's exit status */
  readonly exitCode: number;
}

/** A set's result (cli.md "Sets"): one status, one token, each member's result. */
export interface SetResult {
  set: true;
  status: LeaseStatus;
  names: string[];
  members: LeaseResult[];
  lease_token?: string;
  blocked_by?: string;
  message?: string;
  error?: ErrorInfo;
  readonly token?: string;
  readonly exitCode: number;
}

export interface QueueEntry {
  position: number; owner: string; host: string; since: Timestamp; expires_at: Timestamp; waiting_seconds: number;
}
export type LeaseState = 'live' | 'expired' | 'released' | 'absent';
/** status NAME: the lease as stored, its queue, and for a slotted NAME its slots. */
export interface StatusResult extends Omit<LeaseResult, 'status'> {
  status: LeaseState;
  queue?: QueueEntry[];
  slots?: { count: number | null; live: number; refs: StatusResult[] };
}

export type ListStatus = 'live' | 'expired' | 'released' | 'malformed' | 'unsupported-version' | 'unreadable';
export interface ListEntry {
  name: string; oid: string; status: ListStatus; error: string | null;
  phase?: Phase; owner?: string; host?: string; expires_at?: Timestamp; queue?: QueueEntry[];
}
export interface ListResult { namespace: string; leases: ListEntry[]; readonly exitCode: number; }

export type Severity = 'info' | 'warning' | 'error';
export interface Anomaly {
  id: string; severity: Severity; message: string; method?: string;
  interval_seconds?: number; floor_seconds?: number; slots?: number | null; other?: string; other_slots?: number | null;
  [field: string]: unknown;
}
export interface ReconcileLease {
  name: string; oid: string; phase?: Phase; owner?: string; expires_at?: Timestamp; anomalies: Anomaly[];
  [field: string]: unknown;
}
export interface SkippedAction { name: string; oid: string; action: string; reason: string; code: string; }
export interface ReconcileResult {
  namespace: string; scanned: number; now: Timestamp; grace_seconds?: number;
  leases: ReconcileLease[];
  counts: { ok: number; info: number; warning: number; error: number };
  reaped: Array<Record<string, unknown>>; skipped: SkippedAction[]; pruned: Array<Record<string, unknown>>;
  locks_removed: Array<Record<string, unknown>>; tickets_removed?: number;
  /** exit 1: something at or above failOn */
  found: boolean;
  readonly exitCode: number;
}

export type MigrateStatus = 'would_migrate' | 'migrated' | 'current' | 'skipped_newer' | 'skipped_malformed' | 'conflict';
export interface MigrateResult {
  target: string; applied: boolean;
  leases: Array<{ name: string; from: string; to: string; method: 'commit-time' | 'assumed' | 'released' | null; status: MigrateStatus }>;
  counts: Record<MigrateStatus, number>;
  found: boolean;
  readonly exitCode: number;
}

export interface HistoryItem {
  oid: string; commit_time: Timestamp; op: string; lease?: LeasePayload;
  heartbeat_time?: Timestamp; heartbeat_method?: 'exact' | 'approximate'; assumed_ttl_seconds?: number;
  is_heartbeat?: boolean; interval_seconds?: number; interval_method?: string;
  fair_wait?: { owner: string; host: string; queued_at: Timestamp; waited_seconds: number; queue_position?: number };
  error?: ErrorInfo;
}
export interface HistoryResult { name: string; ref: string; present: boolean; truncated: boolean; items: HistoryItem[]; readonly exitCode: number; }

/** run's object (--json-file): the lease's end state and what happened to CMD. */
export interface RunResult extends Omit<LeaseResult, 'exitCode'> {
  reason?: 'exited' | 'lost' | 'not_acquired' | 'interrupted' | string;
  command?: { exit_code: number | null; signal: number | string | null };
  exit_status?: number;
  members?: LeaseResult[];
  readonly exitCode: number;
}

export type ErrorKind =
  | 'held' | 'not_holder' | 'usage' | 'data' | 'unavailable' | 'internal' | 'output' | 'temporary'
  | 'permission' | 'configuration' | 'interrupted' | 'spawn' | 'protocol' | 'error';

export declare class RefleaseError extends Error {
  /** the binary's exit status (null when it could not be run) */
  readonly exitCode: number | null;
  /** its JSON result, when it gave one (e.g. a held acquire's holder) */
  readonly result: any;
  readonly stderr: string;
  readonly command: string;
  readonly kind: ErrorKind;
}
/** The write's precondition did not hold: held (3) or not the holder (4). */
export declare class CASFailed extends RefleaseError {}
export declare class LeaseHeldError extends CASFailed { readonly result: LeaseResult | SetResult | null; }
export declare class NotHolderError extends CASFailed { readonly result: LeaseResult | SetResult | null; }
export declare class UsageError extends RefleaseError {}
export declare class DataError extends RefleaseError {}
export declare class UnavailableError extends RefleaseError {}
export declare class InternalError extends RefleaseError {}
export declare class OutputError extends RefleaseError {}
export declare class TemporaryError extends RefleaseError {}
export declare class PermissionError extends RefleaseError {}
export declare class ConfigurationError extends RefleaseError {}
export declare class InterruptedError extends RefleaseError {}

/** What an exit status means, in a few words ("the lease is held"). */
export declare function describeExit(code: number): string;
/** The typed error for an exit status. */
export declare function errorFor(code: number | null, info?: { result?: unknown; stderr?: string; command?: string; message?: string }): RefleaseError;

export interface ClientOptions {
  /** the binary (default: $REFLEASE_BIN, else "reflease" on PATH) */
  binary?: string;
  store?: string;
  namespace?: string;
  owner?: string;
  host?: string;
  /** seconds per store operation (--timeout) */
  timeout?: number;
  verifyTimeout?: number;
  verbose?: number;
  quiet?: boolean;
  /** passed as REFLEASE_GITHUB_TOKEN (never on a command line) */
  githubToken?: string;
  /** passed as REFLEASE_GIT_TOKEN */
  gitToken?: string;
  /** more environment for the binary */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** each stderr line of every call, as it comes (progress lines of waits) */
  onStderr?: (line: string) => void;
  /** let the binary write GITHUB_OUTPUT / GITHUB_STEP_SUMMARY itself (default: blanked) */
  githubOutputs?: boolean;
}
export interface CallOptions { signal?: AbortSignal; onStderr?: (line: string) => void; }
/** Seconds, or 'forever' (also Infinity). */
export type Wait = number | 'forever';
export interface AcquireOptions extends CallOptions { ttl?: number; phase?: Exclude<Phase, 'released'>; wait?: Wait; fair?: boolean; slots?: number; }
export interface RunOptions extends CallOptions {
  ttl?: number; every?: number; wait?: Wait; fair?: boolean; slots?: number; conflictExitCode?: number;
  stdio?: import('node:child_process').StdioOptions;
}
export interface KeepOptions {
  ttl?: number; every?: number | 'auto'; releaseOnExit?: boolean; signal?: AbortSignal; detached?: boolean;
  stdio?: import('node:child_process').StdioOptions; env?: Record<string, string | undefined>;
  onBeat?: (result: LeaseResult | SetResult) => void; onStderr?: (line: string) => void;
}
export interface Keeper {
  readonly pid: number | undefined;
  readonly child: import('node:child_process').ChildProcess;
  /** the keeper's exit status: 143 after stop(), 4 when the lease was lost */
  readonly done: Promise<number>;
  stop(signal?: NodeJS.Signals): Promise<number>;
  stderr(): string;
}
export interface LeaseScope { token: string; signal: AbortSignal; result: LeaseResult | SetResult; }
export type Names = string | readonly string[];

export declare class Reflease {
  constructor(options?: ClientOptions);
  readonly binary: string;
  readonly options: ClientOptions;
  acquire(name: string, options?: AcquireOptions): Promise<LeaseResult>;
  acquire(names: readonly string[], options?: AcquireOptions): Promise<LeaseResult | SetResult>;
  heartbeat(name: Names, token: string, options?: CallOptions & { ttl?: number }): Promise<LeaseResult | SetResult>;
  transition(name: Names, token: string, to: Exclude<Phase, 'released'>, options?: CallOptions): Promise<LeaseResult | SetResult>;
  reacquire(name: string, token: string, options?: CallOptions & { ttl?: number }): Promise<LeaseResult>;
  release(name: Names, token: string, options?: CallOptions & { strict?: boolean }): Promise<LeaseResult | SetResult>;
  breakLease(name: string, options?: CallOptions & { force?: boolean }): Promise<LeaseResult>;
  status(name: string, options?: CallOptions & { failIfHeld?: boolean }): Promise<StatusResult>;
  list(options?: CallOptions): Promise<ListResult>;
  history(name: string, options?: CallOptions & { max?: number; assumedTtl?: number }): Promise<HistoryResult>;
  reconcile(options?: CallOptions & { reap?: boolean; pruneReleased?: number; failOn?: Severity | 'never'; summary?: string; grace?: number; assumedTtl?: number }): Promise<ReconcileResult>;
  migrate(options?: CallOptions & { apply?: boolean; to?: string; assumedTtl?: number; failOn?: Severity | 'never'; summary?: string }): Promise<MigrateResult>;
  keep(name: Names, token: string, options?: KeepOptions): Keeper;
  run(name: Names, command: readonly string[], options?: RunOptions): Promise<RunResult>;
  run<T>(name: Names, fn: (scope: LeaseScope) => Promise<T> | T, options?: AcquireOptions & { every?: number | 'auto' }): Promise<T>;
  /** spawn the binary with ARGS (no shell); --json added unless json is false */
  spawn(args: readonly string[], options?: CallOptions & { token?: string; json?: boolean; stdio?: import('node:child_process').StdioOptions; env?: Record<string, string | undefined> }): Promise<{ code: number; signal: NodeJS.Signals | null; stdout: string; stderr: string; pid: number | undefined }>;
}

// ---- the seed TypeScript library's names ----------------------------------

/** A held lease, as the seed library's functions return it. */
export interface Lease {
  name: string;
  token: string;
  phase: Phase | null;
  expiresAt: Timestamp | null;
  oid: string | null;
  result: LeaseResult | SetResult;
}
export interface AliasOptions { client?: Reflease; token?: string; }
/** Throws CASFailed (LeaseHeldError) when the lease is held. */
export declare function acquireLease(name: string, options?: AcquireOptions & AliasOptions): Promise<Lease>;
export declare function heartbeatLease(lease: Lease | { name: string; token: string }, options?: AliasOptions & { ttl?: number }): Promise<Lease>;
export declare function transitionLease(lease: Lease | { name: string; token: string }, phase: Exclude<Phase, 'released'>, options?: AliasOptions): Promise<Lease>;
export declare function reacquireLease(lease: Lease | { name: string; token: string }, options?: AliasOptions & { ttl?: number }): Promise<Lease>;
export declare function releaseLease(lease: Lease | { name: string; token: string }, options?: AliasOptions & { strict?: boolean }): Promise<LeaseResult | SetResult>;
