/**
 * Schedules: create (one-off `at` or recurring `cron`), read, list, cancel, pause, resume, trigger.
 * Control operations are sent with the admin key; every one of them is idempotent on the server
 * (cancelling a cancelled schedule answers it as it is), so they are retried after a lost response.
 * A schedule whose target performs an admin action (a gate release) can only be created through the
 * admin-level twin of the create route, so `create` sends those there, with the admin key.
 */
import type { OperationOptions } from './options.js';
import { readFigures } from './figures.js';
import { type ListOptions, type PagedAsyncIterableIterator, pagedList } from './paging.js';
import { segment, type Transport } from './transport.js';
import type { CreateSchedule, ScheduleFigures, ScheduleList, ScheduleTrigger, ScheduleView } from './types.js';

/** Targets whose run is an admin action: the function-level create route refuses them (403). */
const adminTargets: ReadonlySet<string> = new Set(['gateRelease']);

export interface ListSchedulesOptions extends ListOptions {
  /** Only schedules in this state. */
  readonly state?: ScheduleView['state'];
}

export class Schedules {
  constructor(private readonly transport: Transport) {}

  /**
   * Creates the schedule; with an `id`, repeating the call answers the existing one. A `gateRelease`
   * target goes to `POST /api/schedules/privileged` with the admin key.
   */
  async create(definition: CreateSchedule, options: OperationOptions = {}): Promise<ScheduleView> {
    const privileged = adminTargets.has(definition.target.type);
    const answer = await this.transport.json<ScheduleView>({
      method: 'POST',
      path: privileged ? 'schedules/privileged' : 'schedules',
      ...(privileged ? { key: 'admin' as const } : {}),
      body: definition,
      idempotent: definition.id !== undefined,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /**
   * The schedule as its owner reads it with the function key (an admin-made schedule is the admin's:
   * 404 there), or with `privileged: true` any schedule, through `GET /api/schedules/{id}/privileged`
   * with the admin key.
   */
  async get(id: string, options: OperationOptions & { privileged?: boolean } = {}): Promise<ScheduleView> {
    const path = `schedules/${segment(id)}${options.privileged === true ? '/privileged' : ''}`;
    const answer = await this.transport.json<ScheduleView>({
      method: 'GET',
      path,
      ...(options.privileged === true ? { key: 'admin' as const } : {}),
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Schedules in id order, optionally in one state (admin). */
  list(options: ListSchedulesOptions = {}): PagedAsyncIterableIterator<ScheduleView, ScheduleList> {
    return pagedList(this.transport, { path: 'schedules', query: { state: options.state }, key: 'admin' }, options);
  }

  /** How late the latest runs started, and schedules past due, read now (admin). */
  figures(options: OperationOptions = {}): Promise<ScheduleFigures> {
    return readFigures<ScheduleFigures>(this.transport, 'schedules', options.abortSignal);
  }

  async cancel(id: string, options: OperationOptions = {}): Promise<ScheduleView> {
    return this.control('DELETE', `schedules/${segment(id)}`, options.abortSignal);
  }

  async pause(id: string, options: OperationOptions = {}): Promise<ScheduleView> {
    return this.control('POST', `schedules/${segment(id)}/pause`, options.abortSignal);
  }

  async resume(id: string, options: OperationOptions = {}): Promise<ScheduleView> {
    return this.control('POST', `schedules/${segment(id)}/resume`, options.abortSignal);
  }

  /** Runs the target now. Not retried after a lost response: a repeat would be a second run. */
  async trigger(id: string, options: OperationOptions = {}): Promise<ScheduleTrigger> {
    const answer = await this.transport.json<ScheduleTrigger>({
      method: 'POST',
      path: `schedules/${segment(id)}/trigger`,
      key: 'admin',
      signal: options.abortSignal,
    });
    return answer.body;
  }

  private async control(method: 'POST' | 'DELETE', path: string, signal: AbortSignal | undefined): Promise<ScheduleView> {
    return (await this.transport.json<ScheduleView>({ method, path, key: 'admin', idempotent: true, signal })).body;
  }
}
