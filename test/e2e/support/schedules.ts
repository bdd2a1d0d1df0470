/**
 * What the schedule e2e files share (scheduleRuns, scheduleApi, scheduleTimeZones, scheduleCatchUp,
 * scheduleOverlap): the schedules API of a host, a look at its storage (the target queues, the index
 * table) and a wait on a read. Fires are checked twice: in the schedule's run history and in the
 * target queue itself.
 */
import { QueueServiceClient } from '@azure/storage-queue';
import { TableClient } from '@azure/data-tables';

import type { ScheduleView } from '../../../shared/schedules/views';
import { type E2eHost, storageOf } from './harness';
import { type JsonResponse, requestJson } from './http';
import { periodicTimersOff } from './timers';
import { orchestrationReport } from './wait';
import { until as untilCondition } from '../../support/waits';

export type Schedule = ScheduleView;
export type Run = ScheduleView['runs'][number];

/** Settings every host here gets: the other capabilities' timers would otherwise fire every 30-60 virtual seconds. */
export const quietTimers = periodicTimersOff;

/** The messages in a queue of the host's storage, decoded. */
export async function queueTexts(host: E2eHost, queue: string): Promise<string[]> {
  const client = QueueServiceClient.fromConnectionString(storageOf(host)).getQueueClient(queue);
  if (!(await client.exists())) return [];
  const peeked = await client.peekMessages({ numberOfMessages: 32 });
  return peeked.peekedMessageItems.map((m) => Buffer.from(m.messageText, 'base64').toString('utf8'));
}

/** Whether the schedule has a row in the host's index table. */
export async function indexRowExists(host: E2eHost, id: string): Promise<boolean> {
  const table = TableClient.fromConnectionString(storageOf(host), 'schedules', { allowInsecureConnection: true });
  try {
    await table.getEntity(id, 'schedule');
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

export function api(host: E2eHost) {
  return {
    create: (body: unknown) => requestJson<Schedule>(host, 'POST', '/api/schedules', { body }),
    get: (id: string) => requestJson<Schedule>(host, 'GET', `/api/schedules/${id}`),
    // Controls and the list are operator actions (admin level; see shared/http/authorization.ts).
    cancel: (id: string) => requestJson<Schedule>(host, 'DELETE', `/api/schedules/${id}`, { key: 'admin' }),
    pause: (id: string) => requestJson<Schedule>(host, 'POST', `/api/schedules/${id}/pause`, { key: 'admin' }),
    resume: (id: string) => requestJson<Schedule>(host, 'POST', `/api/schedules/${id}/resume`, { key: 'admin' }),
    trigger: (id: string) =>
      requestJson<{ triggerId: string; schedule: Schedule }>(host, 'POST', `/api/schedules/${id}/trigger`, { key: 'admin' }),
    list: (query: string) =>
      requestJson<{ items: Schedule[]; continuationToken?: string }>(host, 'GET', `/api/schedules${query}`, { key: 'admin' }),
    instance: (id: string) =>
      requestJson<{ runtimeStatus: string }>(host, 'GET', `/runtime/webhooks/durabletask/instances/${id}`, { key: 'admin' }),
    async now(): Promise<number> {
      const res = await requestJson<{ now: string }>(host, 'GET', '/admin/devhost/clock', { key: 'admin' });
      return Date.parse(res.body.now);
    },
    /** Moves the host's virtual clock to `at`, however long the host takes to settle (no budget of its own). */
    async advanceTo(at: number | string): Promise<void> {
      await host.advanceClock({ to: typeof at === 'number' ? new Date(at).toISOString() : at });
    },
  };
}

/**
 * Reads until `done` holds (no budget of its own: test/support/waits.ts); given up, it reports the
 * last value read and the orchestrations still running. `_budgetMs` is ignored, kept so callers compile.
 */
export function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, _budgetMs?: number): Promise<T> {
  let last: T | undefined;
  return untilCondition(
    what,
    async () => {
      last = await read();
      return done(last) ? last : undefined;
    },
    { report: async () => `last value: ${JSON.stringify(last)}\n${await orchestrationReport()}` },
  );
}

export const ran = (s: Schedule): Run[] => s.runs.filter((r) => r.runId !== undefined);

export const body = <T>(res: JsonResponse<T>, status: number): T => {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
  return res.body;
};
