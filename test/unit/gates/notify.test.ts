import { notifyWaiters } from '../../../shared/gates/activities';
import type { DurableClient } from '../../../shared/durable/client';

/** A Durable client stand-in that records raised events; only raiseEvent is reached by notify. */
function recordingClient(goneIds: ReadonlySet<string>) {
  const raised: { instanceId: string; event: string; data: unknown }[] = [];
  let inFlight = 0;
  let peak = 0;
  const client = {
    raiseEvent: async (instanceId: string, event: string, data: unknown) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      raised.push({ instanceId, event, data });
      return goneIds.has(instanceId) ? ('gone' as const) : ('delivered' as const);
    },
  } as unknown as DurableClient;
  return { client, raised, peak: () => peak };
}

describe('notifyWaiters', () => {
  it('raises the release on every run of the batch once, counting finished runs as gone, 16 at a time', async () => {
    const waiters = Array.from({ length: 50 }, (_, i) => `gate:g:run:${i}`);
    const { client, raised, peak } = recordingClient(new Set(['gate:g:run:3', 'gate:g:run:40']));
    const event = { gate: 'g', generation: 2, release: { generation: 2, at: '2026-11-21T12:00:00.000Z', by: 'ops', how: 'api' as const } };

    const result = await notifyWaiters(client, { event, waiters });

    expect(result).toEqual({ delivered: 48, gone: 2 });
    expect(raised.map((r) => r.instanceId).sort()).toEqual([...waiters].sort());
    expect(new Set(raised.map((r) => r.event))).toEqual(new Set(['GateReleased']));
    expect(raised.every((r) => r.data === event)).toBe(true);
    expect(peak()).toBe(16);
  });
});
