// The one place a run's events are appended, read and guarded. Who may append is the guard: the attempt holding
// the run's claim (a worker executing it, {@link AttemptJournal}), or anyone while the run has one of the given
// statuses (a cancel, an answer, an expiry: no attempt holds a waiting run, {@link appendToRun}). Each append is
// one statement with the status change its events imply ({@link statusChange}).
import {
  appendRunEvents,
  type Db,
  findRun,
  followDescendant,
  listRunEvents,
  lockRunLine,
  type Queryable,
  type RunEventRecord,
  type RunStatus,
} from '@maitento/store';
import { type JournalEvent, type RunEventInput, statusChange } from './events.js';

/** Thrown when this attempt no longer holds the run (a later attempt claimed it, or it ended meanwhile). */
export class ClaimLost extends Error {
  constructor(runId: string) {
    super(`run ${runId} is no longer held by this attempt`);
  }
}

/**
 * Thrown when an append that starts something (a tool call, a child run: `tool-call-started`) or that makes the run
 * wait was refused because the run's cancel was requested: nothing was started, and the attempt stores the
 * cancellation at once (without waiting for the cancel's wake-up or poll).
 */
export class CancelSeen extends Error {
  constructor(runId: string) {
    super(`run ${runId} was cancelled before its next call started`);
  }
}

// The one cast from the store's open records: every event is written through events.ts's constructors.
function typed(records: RunEventRecord[]): JournalEvent[] {
  return records as JournalEvent[];
}

/**
 * Appends events to a run while it has one of `statuses`, with the status change they imply; resolves with the
 * run's new last seq, or false (nothing written) when it has none of them.
 */
export async function appendToRun(
  db: Queryable,
  runId: string,
  statuses: RunStatus[],
  events: RunEventInput[],
  /** Queues a parent run in `db` (a transaction) once this child run ended, so it takes its child's answer. */
  wakeParent?: (db: Queryable, parentRunId: string) => Promise<void>,
): Promise<number | false> {
  const change = statusChange(events);
  // The run's ancestors follow its status: their locks first, top down (lockRunLine).
  if (change !== undefined) await lockRunLine(db, runId);
  const seq = await appendRunEvents(db, runId, { statuses }, events, change);
  if (seq === false || change === undefined) return seq;
  // A child run's ancestors follow it (they show PendingApproval while it waits for a person).
  const parent = await followDescendant(db, runId, change.status);
  if (parent !== null && isTerminal(change.status)) await wakeParent?.(db, parent);
  return seq;
}

function isTerminal(status: RunStatus): boolean {
  return status === 'Completed' || status === 'Failed' || status === 'Cancelled';
}

/** What a child run's journal does with its status changes: its ancestors follow, its parent is queued at its end. */
export interface ChildLink {
  db: Db;
  queue: { send(runId: string, tx?: Queryable): Promise<void>; sent(): void };
}

/** The run's events with `seq > after`, in order: at most `limit` of them (all when undefined). */
export async function readEvents(db: Queryable, runId: string, after = 0, limit?: number): Promise<JournalEvent[]> {
  return typed(await listRunEvents(db, runId, after, limit));
}

/**
 * A run's journal as one attempt (the holder of the run's claim) writes it: appends fenced by the claim, and the
 * events read with the claim, kept up to date by this attempt's own appends.
 */
export class AttemptJournal {
  // The events as this attempt knows them; undefined again when they may be stale.
  #known: JournalEvent[] | undefined;
  // The run's last seq if only this attempt appended since it last read the events.
  #ownSeq: number;
  // The cache epoch its last append read in the same statement, until taken (see takeEpoch).
  #epoch: bigint | undefined;

  constructor(
    private readonly db: Queryable,
    readonly runId: string,
    readonly claim: string,
    events: RunEventRecord[],
    /** Set for a child run (one started by another run's call). */
    private readonly child?: ChildLink,
  ) {
    this.#known = typed(events);
    this.#ownSeq = events[events.length - 1]?.seq ?? 0;
  }

  /**
   * The run's last seq if nobody but this attempt appended since it last read the events: an append with it as
   * `expectSeq` fails when anyone else did (an answer stored between this attempt's own appends).
   */
  get ownSeq(): number {
    return this.#ownSeq;
  }

  /**
   * Appends events (and the status change they imply) fenced by this attempt's claim; with `expectSeq`, only if no
   * other event was stored since (a waiting run must not miss an answer or a cancel). Resolves false when that
   * extra condition failed; throws {@link ClaimLost} when the claim is gone. `tx` joins the caller's transaction.
   */
  async append(events: RunEventInput[], expectSeq?: number, tx?: Queryable): Promise<boolean> {
    // A call (or a child run) is started only while the run's cancel has not been requested: the append that marks
    // it started is refused once a cancel committed, and a cancel that comes later waits for it (the run row's
    // lock), then sees what it started (docs/runs.md, "The run tree").
    const live = events.some((event) => event.type === 'tool-call-started');
    // One statement, atomic on its own: no transaction of its own needed.
    const fence = { claim: this.claim, expectSeq, live };
    this.#epoch = undefined;
    // The write of a `tool-call-started` (alone or with its turn's model response) precedes the call at once: it
    // reads the cache epoch for the call's reads in the same statement. Not in a caller's transaction.
    const observe =
      tx === undefined && events.some((event) => event.type === 'tool-call-started')
        ? (epoch: bigint) => {
            this.#epoch = epoch;
          }
        : undefined;
    const change = statusChange(events);
    const child = this.child;
    const seq =
      child !== undefined && change !== undefined && tx === undefined
        ? await child.db.transaction(async (t) => {
            // Its ancestors follow it: their locks first, top down, as a cancel takes them (lockRunLine).
            await lockRunLine(t, this.runId);
            const done = await appendRunEvents(t, this.runId, fence, events, change);
            if (done === false) return false;
            const parent = await followDescendant(t, this.runId, change.status);
            if (parent !== null && isTerminal(change.status)) await child.queue.send(parent, t);
            return done;
          })
        : await appendRunEvents(tx ?? this.db, this.runId, fence, events, change, observe);
    if (seq !== false && child !== undefined && change !== undefined && isTerminal(change.status)) child.queue.sent();
    if (seq !== false) {
      this.#ownSeq += events.length;
      const known = this.#known;
      const last = known?.[known.length - 1]?.seq ?? 0;
      if (known === undefined || tx !== undefined || seq !== last + events.length) this.#known = undefined;
      else {
        const at = new Date().toISOString();
        known.push(...events.map((event, index) => ({ ...event, seq: last + index + 1, at })));
      }
      return true;
    }
    this.#known = undefined;
    // The extra condition failed, not necessarily the claim: the run row tells which.
    if (expectSeq !== undefined || live) {
      const now = await findRun(tx ?? this.db, this.runId);
      if (now?.claim === this.claim && now.status === 'Running') {
        // Refused by the cancel (a call about to start, or the run about to wait): the attempt stores it at once.
        if (now.cancelRequested) throw new CancelSeen(this.runId);
        if (expectSeq !== undefined && !tx) return false;
      }
    }
    throw new ClaimLost(this.runId);
  }

  /**
   * The cache epoch (`mt_cache_epoch`) that this attempt's last append read in its own statement, once: undefined
   * when that append stored no `tool-call-started`, failed or joined a transaction, or when it was taken already. A tool call whose
   * `tool-call-started` that append stored takes it as its store cache's sync, with no round trip of its own.
   */
  takeEpoch(): bigint | undefined {
    const epoch = this.#epoch;
    this.#epoch = undefined;
    return epoch;
  }

  /**
   * The run's events: read with the claim, then kept up to date by this attempt's appends; read again whenever an
   * append's seq shows that someone else appended meanwhile (an answer), or an append joined a transaction.
   */
  async events(): Promise<JournalEvent[]> {
    if (this.#known === undefined) {
      this.#known = await readEvents(this.db, this.runId);
      this.#ownSeq = this.#known[this.#known.length - 1]?.seq ?? 0;
    }
    return this.#known;
  }
}
