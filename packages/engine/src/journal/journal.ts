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
  type RunAppend,
  type RunEventRecord,
  type RunFence,
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
 * The one write of a run's events: one statement ({@link appendRunEvents}) fenced by `fence`, with the status change
 * the events imply; when the run's line follows it (`follow`: a run that may be a child), its ancestors' locks first,
 * top down (lockRunLine, as a cancel takes them), then its ancestors' statuses, and its parent queued by `wakeParent`
 * once it ended. In `q`, a transaction when the line follows. Resolves with what the statement wrote and read (its
 * seq, the cache epoch), or false when the fence did not hold.
 */
async function writeEvents(
  q: Queryable,
  runId: string,
  fence: RunFence,
  events: RunEventInput[],
  follow: boolean,
  wakeParent?: (db: Queryable, parentRunId: string) => Promise<void>,
): Promise<RunAppend | false> {
  const change = statusChange(events);
  const line = follow && change !== undefined;
  if (line) await lockRunLine(q, runId);
  const written = await appendRunEvents(q, runId, fence, events, change);
  if (written === false || !line) return written;
  const parent = await followDescendant(q, runId, change.status);
  if (parent !== null && isTerminal(change.status)) await wakeParent?.(q, parent);
  return written;
}

/**
 * Appends events to a run while it has one of `statuses`, with the status change they imply; resolves with the
 * run's new last seq, or false (nothing written) when it has none of them. `db` is a transaction when the events
 * change the run's status (its ancestors follow).
 */
export async function appendToRun(
  db: Queryable,
  runId: string,
  statuses: RunStatus[],
  events: RunEventInput[],
  /** Queues a parent run in `db` (a transaction) once this child run ended, so it takes its child's answer. */
  wakeParent?: (db: Queryable, parentRunId: string) => Promise<void>,
): Promise<number | false> {
  const written = await writeEvents(db, runId, { statuses }, events, true, wakeParent);
  return written === false ? false : written.seq;
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
   * other event was stored since (a waiting run must not miss an answer or a cancel). Resolves with what the append
   * wrote and read (the run's new seq, and the cache epoch its statement read: a call whose `tool-call-started` it
   * stored takes that as its store cache's sync), or false when that extra condition failed; throws
   * {@link ClaimLost} when the claim is gone. `tx` joins the caller's transaction.
   */
  async append(events: RunEventInput[], expectSeq?: number, tx?: Queryable): Promise<RunAppend | false> {
    // A call (or a child run) is started only while the run's cancel has not been requested: the append that marks
    // it started is refused once a cancel committed, and a cancel that comes later waits for it (the run row's
    // lock), then sees what it started (docs/runs.md, "The run tree").
    const live = events.some((event) => event.type === 'tool-call-started');
    const fence = { claim: this.claim, expectSeq, live };
    const change = statusChange(events);
    const child = this.child;
    // A child run's line follows its status changes (in a transaction: its own unless it joins the caller's); any
    // other append is one statement, atomic on its own.
    const follow = child !== undefined && change !== undefined;
    const write = (q: Queryable) =>
      writeEvents(q, this.runId, fence, events, follow, (t, parent) => child!.queue.send(parent, t));
    const written = follow && tx === undefined ? await child.db.transaction(write) : await write(tx ?? this.db);
    if (written !== false && follow && isTerminal(change.status)) child.queue.sent();
    if (written !== false) {
      this.#ownSeq += events.length;
      const known = this.#known;
      const last = known?.[known.length - 1]?.seq ?? 0;
      if (known === undefined || tx !== undefined || written.seq !== last + events.length) this.#known = undefined;
      else {
        const at = new Date().toISOString();
        known.push(...events.map((event, index) => ({ ...event, seq: last + index + 1, at })));
      }
      return written;
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
