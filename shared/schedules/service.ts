/**
 * The schedules use-cases behind the HTTP API.
 *
 * Create never leaves the index and the orchestration disagreeing for good: the row is written
 * first as `pending`, the orchestration is started with the schedule id as instance id (a second
 * start of the same id is refused by Durable and treated as success), and the orchestration's first
 * checkpoint marks the row `active`. A crash in between leaves a `pending` row, which a retry of the
 * same request (same id, same definition) or the reconciler completes.
 *
 * Control requests (pause, resume, cancel, trigger) are conditional writes on the row followed by a
 * wake-up event; the row is what the orchestration obeys.
 *
 * One file (about 430 lines): every use-case here keeps that one protocol between the row and the
 * orchestration (pending, started, active; a control write, then a wake-up), which reads best whole.
 */
import type { Clock, Random } from '../clock';
import type { EffectRules } from '../effects/admission';
import { AppError } from '../errors';
import type { Logger } from '../log';
import { owns, type Reader as Who } from '../ownership';
import { shareOf } from '../shares';
import { type BackoffPolicy, LostRace, retryLostRaces, retryContextOf } from '../retry';
import type { Page, PageRequest } from '../storage/list';
import { traceparentOf } from '../telemetry/traceContext';
import { engineSettings } from './activities';
import { admit } from './admission';
import type { Creator } from './creator';
import { definitionKey, definitionOf, type CreateScheduleBody, type ScheduleDefinition } from './definition';
import type { ScheduleEngine } from './engine';
import { initialState, type ScheduleState } from './machine';
import { type EngineSettings, latenessSeconds, type ScheduleStatus } from './records';
import { scheduledMessage, type ScheduledDelivery } from './scheduledDelivery';
import type { NewScheduleRow, ScheduleRow, ScheduleTable } from './scheduleTable';
import type { ScheduleSettings } from './settings';
import { nextFireAfter } from './timing';
import { type Reader, type ScheduleView, viewOf } from './views';

export interface ScheduleServiceDeps {
  readonly table: ScheduleTable;
  /** On the Durable client of the invocation being served. */
  readonly engine: () => ScheduleEngine;
  /** Undefined when no Service Bus is configured. */
  readonly delivery: ScheduledDelivery | undefined;
  readonly settings: ScheduleSettings;
  /** What a target may do here (allow-lists, configured services, available capabilities). */
  readonly effectRules: EffectRules;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  readonly newId: () => string;
}

/** A create still `pending` after this long was cut short (no request takes that long): the reconciler completes it. */
export const pendingGraceMs = 120_000;

/** Trigger-now requests a schedule may have waiting at once. */
const maxPendingTriggers = 10;

export interface CreateResult {
  readonly created: boolean;
  readonly view: ScheduleView;
}

function notFound(id: string): AppError {
  return new AppError('NotFound', `No schedule "${id}"`);
}

function conflict(row: ScheduleRow, message: string): AppError {
  return new AppError('Conflict', message, { extra: { schedule: row.id, state: row.state } });
}

/** Orchestration statuses that mean nothing will move the schedule on any more (missing is one too). */
const restartable = new Set(['Failed', 'Terminated']);

/** The highest run number the row knows of: a restarted orchestration numbers its runs after it, so run ids stay unique. */
function runsSoFar(row: ScheduleRow): number {
  const numbers = [...row.runs, ...row.settled].map((r) => Number(r.runId?.slice(r.runId.lastIndexOf('#') + 1) ?? 0));
  return Math.max(row.runCount, ...numbers.filter(Number.isFinite));
}

/**
 * A lost orchestration's successor: the row's definition, its next fire still ahead (so the catch-up
 * policy decides about the fires missed meanwhile, as after downtime), runs numbered on.
 */
function restartState(row: ScheduleRow, settings: EngineSettings, now: Date): ScheduleState {
  const state = initialState(row.id, row.definition, settings, now);
  const cursor = row.nextFireAt === undefined ? state.cursor : new Date(Date.parse(row.nextFireAt) - 1).toISOString();
  return { ...state, cursor, runs: runsSoFar(row) };
}

function isScheduledDelivery(definition: ScheduleDefinition): boolean {
  return definition.target.type === 'serviceBus' && definition.target.delivery === 'scheduled';
}

/** Schedules one figures read looks at (one page of the index). */
const figureRows = 200;
/** Schedules the figures list at most, per list (latest runs: the latest ones first by lateness). */
const figureRuns = 10;
/** A next fire this far past due that has not run counts as overdue (a timer fires within seconds). */
const overdueGraceMs = 60_000;

export class ScheduleService {
  constructor(private readonly deps: ScheduleServiceDeps) {}

  private now(): Date {
    return new Date(this.deps.clock.now());
  }

  private update<T>(id: string, attempt: (row: ScheduleRow) => Promise<T>): Promise<T> {
    return retryLostRaces(retryContextOf(this.deps, `schedule ${id}`), async () => {
      const row = await this.deps.table.read(id);
      if (row === undefined) throw notFound(id);
      return attempt(row);
    });
  }

  private write(row: ScheduleRow, next: NewScheduleRow): Promise<ScheduleRow> {
    return this.deps.table.replace(row, { ...next, updatedAt: this.now().toISOString() });
  }

  /** Creates a schedule; `creator` is recorded with it (the first creator stays on an idempotent repeat). */
  async create(body: CreateScheduleBody, creator: Creator): Promise<CreateResult> {
    const definition = definitionOf(body);
    const now = this.now();
    await admit(
      definition,
      this.deps.effectRules,
      now,
      creator.level === 'function' ? this.deps.settings.minCronIntervalSeconds : undefined,
    );
    const id = body.id ?? this.deps.newId();
    const key = definitionKey(definition);
    const fresh: NewScheduleRow = {
      id,
      definition,
      definitionKey: key,
      mode: isScheduledDelivery(definition) ? 'serviceBusScheduled' : 'orchestration',
      state: 'pending',
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      nextFireAt: nextFireAfter(definition.timing, new Date(now.getTime() - 1))?.toISOString(),
      runs: [],
      runCount: 0,
      firedCount: 0,
      triggers: [],
      settled: [],
      controlVersion: 0,
      ackVersion: 0,
      sequenceNumber: undefined,
      createdBy: creator,
    };
    // A repeat of an existing id is answered below without a place; only a new schedule needs one.
    const needsPlace = creator.level === 'function' && (body.id === undefined || (await this.deps.table.read(id)) === undefined);
    // Insert-if-absent: an id that exists (a retry, a conflict) is read back and compared.
    const { created, row } = needsPlace ? await this.createWithinCap(fresh) : await this.deps.table.create(fresh);
    if (!created) return { created: false, view: viewOf(await this.again(row, key), creator.level) };
    return { created: true, view: viewOf(await this.begin(row), creator.level) };
  }

  /**
   * TALLYHO_SCHEDULES_MAX_LIVE for function-level creates (each live schedule is an orchestration
   * that wakes up for ever), and its owner's share of it (a quarter, shared/shares.ts), so one caller
   * cannot fill it for the others. Counted before the insert, so a full app writes nothing, and again
   * after it, so concurrent creates on several instances cannot pass the cap or a share together:
   * one that finds itself over removes its own `pending` row (nothing was started yet) and tries
   * again after a back-off, when the counts before the insert decide.
   */
  private createWithinCap(fresh: NewScheduleRow): Promise<{ created: boolean; row: ScheduleRow }> {
    const max = this.deps.settings.maxLive;
    const { share } = shareOf(max);
    const owner = fresh.createdBy?.owner;
    const ownerHolds = (atMost: number): Promise<number> =>
      owner === undefined ? Promise.resolve(0) : this.deps.table.countLive(atMost, { owner });
    return retryLostRaces(retryContextOf(this.deps, 'the live schedule count'), async () => {
      if ((await ownerHolds(share)) >= share) {
        throw new AppError(
          'TooManyRequests',
          `You already hold your share (${share}) of the live schedules (TALLYHO_SCHEDULES_MAX_LIVE); others keep theirs. Create it once one of yours ends`,
          { retryAfterSeconds: 30, extra: { limit: 'TALLYHO_SCHEDULES_MAX_LIVE', share } },
        );
      }
      if ((await this.deps.table.countLive(max, { perOwner: share })) >= max) {
        throw new AppError(
          'Conflict',
          `The app already holds ${max} live schedules (TALLYHO_SCHEDULES_MAX_LIVE); a function-level create is refused until some end or an operator raises it`,
          { extra: { limit: 'TALLYHO_SCHEDULES_MAX_LIVE', max } },
        );
      }
      const result = await this.deps.table.create(fresh);
      if (
        result.created &&
        ((await ownerHolds(share + 1)) > share || (await this.deps.table.countLive(max + 1, { perOwner: share })) > max)
      ) {
        await this.deps.table.remove(result.row);
        throw new LostRace(`schedules created concurrently passed TALLYHO_SCHEDULES_MAX_LIVE or a share of it`);
      }
      return result;
    });
  }

  /** The same id again: the same definition is idempotent (and completes a create cut short), another is a 409. */
  private async again(row: ScheduleRow, key: string): Promise<ScheduleRow> {
    if (row.definitionKey !== key) {
      throw conflict(row, `Schedule "${row.id}" exists with a different definition; schedule ids are never reused`);
    }
    return row.state === 'pending' ? this.begin(row) : row;
  }

  /**
   * Starts the schedule: its orchestration (a start of an id that already runs is success), whose
   * first step marks the row `active`; or, in Service Bus scheduled mode, the scheduled message.
   */
  private async begin(row: ScheduleRow): Promise<ScheduleRow> {
    if (row.mode === 'serviceBusScheduled') return this.scheduleDelivery(row);
    await this.deps.engine().start(row.id, initialState(row.id, row.definition, engineSettings(this.deps.settings), this.now()));
    return row;
  }

  /** Service Bus scheduled mode: hand the message to the broker and keep its sequence number before answering. */
  private async scheduleDelivery(row: ScheduleRow): Promise<ScheduleRow> {
    const { target, timing } = row.definition;
    const delivery = this.deps.delivery;
    if (target.type !== 'serviceBus' || timing.kind !== 'once' || delivery === undefined) {
      throw new AppError('Internal', `Schedule ${row.id} is not a Service Bus scheduled delivery`);
    }
    let sequenceNumber: string;
    try {
      sequenceNumber = await delivery.schedule(
        target.entity,
        scheduledMessage(row.id, target.message, timing.at, target.sessionId),
        new Date(timing.at),
      );
    } catch (err) {
      // Nothing was scheduled: leave nothing behind either.
      await this.deps.table.remove(row).catch(() => undefined);
      // The SDK's message names the namespace, entity and broker internals: the log's, not the caller's.
      throw new AppError('DependencyUnavailable', 'Service Bus did not take the scheduled message; nothing was created', {
        cause: err,
        retryAfterSeconds: 5,
        internal: err instanceof Error ? err.message : String(err),
      });
    }
    const after = await this.update(row.id, async (current) =>
      current.state === 'pending' ? this.write(current, { ...current, state: 'active', sequenceNumber }) : current,
    );
    if (after.state === 'cancelled') {
      // Cancelled while we were scheduling it: take the message back.
      await delivery.cancel(target.entity, sequenceNumber);
    }
    return after;
  }

  /**
   * Refuses (404, as for no schedule) anyone but the schedule's owner or an admin; the level its views
   * are answered at for `who` (an admin's: everything).
   */
  async requireOwned(id: string, who: Who): Promise<Reader> {
    const row = await this.deps.table.read(id);
    if (row === undefined || !owns(who, row.createdBy?.owner)) throw notFound(id);
    return who.roles.admin ? 'admin' : 'function';
  }

  /** The schedule as a reader at `reader` level may see it (views.ts `Reader`). */
  async get(id: string, reader: Reader): Promise<ScheduleView> {
    const row = await this.deps.table.read(id);
    if (row === undefined) throw notFound(id);
    return viewOf(row, reader);
  }

  /** A page of schedules in id order, as an admin sees them. */
  async list(state: ScheduleStatus | undefined, page: PageRequest): Promise<Page<ScheduleView>> {
    const rows = await this.deps.table.list(state, page);
    return { ...rows, items: rows.items.map((row) => viewOf(row, 'admin')) };
  }

  /**
   * The figures an operator looks at first: how late the latest runs started, and schedules whose next
   * fire is past due and has not run. One page of the index (at most `figureRows` schedules, id order).
   */
  async figures() {
    const now = this.deps.clock.now();
    const page = await this.deps.table.list(undefined, { maxPageSize: figureRows });
    const latest = page.items.flatMap((row) => {
      const run = row.runs.findLast((r) => r.startedAt !== undefined && r.kind !== 'trigger');
      const lateness = run?.startedAt === undefined ? undefined : latenessSeconds(run, run.startedAt);
      return run === undefined || lateness === undefined
        ? []
        : [{ id: row.id, due: run.at, startedAt: run.startedAt ?? '', latenessSeconds: lateness }];
    });
    const overdue = page.items.filter(
      (row) => row.state === 'active' && row.nextFireAt !== undefined && Date.parse(row.nextFireAt) + overdueGraceMs < now,
    );
    return {
      readAt: new Date(now).toISOString(),
      schedules: page.items.length,
      worstLatenessSeconds: latest.reduce((max, r) => Math.max(max, r.latenessSeconds), 0),
      latestRuns: latest.sort((a, b) => b.latenessSeconds - a.latenessSeconds).slice(0, figureRuns),
      overdue: overdue.map((row) => ({ id: row.id, nextFireAt: row.nextFireAt ?? '' })).slice(0, figureRuns),
      truncated: page.continuationToken !== undefined,
    };
  }

  /** The reconcile timer's pass: creates left pending, then orchestrations that are gone. Logged when it did anything. */
  async reconcile(): Promise<{ started: number; left: number; restarted: number; alive: number }> {
    const report = { ...(await this.reconcilePending(pendingGraceMs)), ...(await this.reconcileOverdue()) };
    if (report.started + report.left + report.restarted > 0) this.deps.logger.log('info', 'schedules.reconciled', report);
    return report;
  }

  /**
   * Completes creates that stopped between the index row and the orchestration start (the caller
   * crashed or gave up, and did not retry): rows still `pending` after `olderThanMs`. Service Bus
   * scheduled deliveries are left alone and logged: whether their message reached the broker is
   * unknown, and scheduling it again could deliver it twice.
   */
  async reconcilePending(olderThanMs: number): Promise<{ started: number; left: number }> {
    const cutoff = this.deps.clock.now() - olderThanMs;
    let started = 0;
    let left = 0;
    let token: string | undefined;
    do {
      const page = await this.deps.table.list('pending', { maxPageSize: 100, continuationToken: token });
      for (const row of page.items) {
        if (Date.parse(row.createdAt) > cutoff) continue;
        if (row.mode === 'serviceBusScheduled') {
          left++;
          this.deps.logger.log('warn', 'schedules.reconcile.pendingDelivery', { schedule: row.id, createdAt: row.createdAt });
          continue;
        }
        await this.begin(row);
        started++;
        this.deps.logger.log('info', 'schedules.reconcile.started', { schedule: row.id, createdAt: row.createdAt });
      }
      token = page.continuationToken;
    } while (token !== undefined);
    return { started, left };
  }

  /**
   * Restarts orchestrations that are gone: an `active` or `paused` row whose next fire is overdue by
   * more than the misfire grace (a live orchestration would have moved it on) has its orchestration's
   * status read; one that is missing, `Failed` or `Terminated` is started again from the row under
   * the schedule id. Any other status is left alone (a running one is catching up, e.g. after the app
   * was down). Only overdue rows are looked at, so the cost follows the anomalies.
   */
  async reconcileOverdue(): Promise<{ restarted: number; alive: number }> {
    const now = this.deps.clock.now();
    const before = new Date(now - this.deps.settings.misfireGraceSeconds * 1000).toISOString();
    let restarted = 0;
    let alive = 0;
    let token: string | undefined;
    do {
      const page = await this.deps.table.listOverdue(before, 100, token);
      for (const row of page.rows) {
        const status = await this.deps.engine().status(row.id);
        if (status !== undefined && !restartable.has(status)) {
          alive++;
          continue;
        }
        await this.deps.engine().start(row.id, restartState(row, engineSettings(this.deps.settings), new Date(now)));
        restarted++;
        this.deps.logger.log('warn', 'schedules.reconcile.restarted', {
          schedule: row.id,
          state: row.state,
          nextFireAt: row.nextFireAt,
          runtimeStatus: status ?? 'missing',
        });
      }
      token = page.continuationToken;
    } while (token !== undefined);
    return { restarted, alive };
  }

  private async wake(id: string): Promise<void> {
    if (!(await this.deps.engine().wake(id))) {
      // The row already says what to do; the orchestration reads it on its next turn at the latest.
      this.deps.logger.log('info', 'schedules.wake.undelivered', { schedule: id });
    }
  }

  private control(row: ScheduleRow, change: Partial<NewScheduleRow>): Promise<ScheduleRow> {
    return this.write(row, { ...row, ...change, controlVersion: row.controlVersion + 1 });
  }

  /** Cancels a schedule: it never fires again. A one-off that already fired (or is firing) is a 409. */
  async cancel(id: string, level: Reader = 'admin'): Promise<ScheduleView> {
    const row = await this.deps.table.read(id);
    if (row === undefined) throw notFound(id);
    if (row.mode === 'serviceBusScheduled') return viewOf(await this.cancelDelivery(row), level);
    let changed = false;
    const after = await this.update(id, async (current) => {
      if (current.state === 'cancelled') return current;
      if (current.state === 'completed') throw conflict(current, `Schedule "${id}" has already ended`);
      if (current.definition.timing.kind === 'once' && current.firedCount > 0)
        throw conflict(current, `Schedule "${id}" has already fired`);
      changed = true;
      return this.control(current, { state: 'cancelled', nextFireAt: undefined, triggers: [] });
    });
    if (changed) await this.wake(id);
    return viewOf(after, level);
  }

  private async cancelDelivery(row: ScheduleRow): Promise<ScheduleRow> {
    if (row.state === 'cancelled') return row;
    const { target, timing } = row.definition;
    const delivery = this.deps.delivery;
    if (row.state === 'completed' || (timing.kind === 'once' && Date.parse(timing.at) <= this.deps.clock.now())) {
      throw conflict(row, `Schedule "${row.id}" has already been delivered to Service Bus`);
    }
    if (row.sequenceNumber !== undefined) {
      if (target.type !== 'serviceBus' || delivery === undefined)
        throw new AppError('DependencyUnavailable', 'Service Bus is not configured (ServiceBusConnection)');
      if ((await delivery.cancel(target.entity, row.sequenceNumber)) === 'gone') {
        await this.update(row.id, async (current) => this.write(current, { ...current, state: 'completed', nextFireAt: undefined }));
        throw conflict(row, `Schedule "${row.id}" has already been delivered to Service Bus`);
      }
    }
    return this.update(row.id, async (current) => this.control(current, { state: 'cancelled', nextFireAt: undefined }));
  }

  async pause(id: string, level: Reader = 'admin'): Promise<ScheduleView> {
    return this.setActive(id, false, level);
  }

  async resume(id: string, level: Reader = 'admin'): Promise<ScheduleView> {
    return this.setActive(id, true, level);
  }

  private async setActive(id: string, active: boolean, level: Reader): Promise<ScheduleView> {
    let changed = false;
    const after = await this.update(id, async (row) => {
      if (row.mode === 'serviceBusScheduled') throw conflict(row, 'A Service Bus scheduled delivery cannot be paused; cancel it instead');
      if (row.state === 'cancelled' || row.state === 'completed') throw conflict(row, `Schedule "${id}" has ended (${row.state})`);
      const want: ScheduleStatus = active ? 'active' : 'paused';
      if (row.state === want || (active && row.state === 'pending')) return row;
      changed = true;
      return this.control(row, { state: want });
    });
    if (changed) await this.wake(id);
    return viewOf(after, level);
  }

  /** Asks for a run now (it obeys the overlap policy). Answers the trigger id to find the run by. */
  async trigger(id: string, level: Reader = 'admin'): Promise<{ triggerId: string; schedule: ScheduleView }> {
    const triggerId = this.deps.newId();
    // The run continues the trace of the request that asked for it (the orchestration carries no trace context).
    const traceparent = traceparentOf();
    const after = await this.update(id, async (row) => {
      if (row.mode === 'serviceBusScheduled') throw conflict(row, 'A Service Bus scheduled delivery has no runs to trigger');
      if (row.state === 'cancelled' || row.state === 'completed') throw conflict(row, `Schedule "${id}" has ended (${row.state})`);
      if (row.triggers.length >= maxPendingTriggers) {
        throw new AppError('TooManyRequests', `Schedule "${id}" already has ${maxPendingTriggers} triggers waiting`, {
          retryAfterSeconds: 1,
        });
      }
      const trigger = { id: triggerId, requestedAt: this.now().toISOString(), ...(traceparent === undefined ? {} : { traceparent }) };
      return this.control(row, { triggers: [...row.triggers, trigger] });
    });
    await this.wake(id);
    return { triggerId, schedule: viewOf(after, level) };
  }
}
