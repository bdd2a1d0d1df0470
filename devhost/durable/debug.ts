/**
 * A readable dump of an instance (history, inbox, what it waits for) for failure messages: a stuck
 * orchestration should say what it is stuck on, not just time out.
 */
import type { Execution, Instances, Timers } from './ports';
import { EventType, type HistoryEvent } from './protocol';

const names = Object.fromEntries(Object.entries(EventType).map(([name, value]) => [value, name])) as Record<number, string>;

function line(e: HistoryEvent): string {
  const type = names[e.EventType] ?? String(e.EventType);
  const { EventType: _t, EventId, Timestamp, ...rest } = e;
  const id = EventId >= 0 ? `#${EventId} ` : '';
  const detail = JSON.stringify(rest);
  return `  ${Timestamp} ${id}${type} ${detail.length > 200 ? `${detail.slice(0, 200)}…` : detail}`;
}

export function describeInstance(
  engine: Instances & Timers & Pick<Execution, 'activities'> & { idle(): boolean },
  instanceId: string,
): string {
  const rt = engine.orchestrations.get(instanceId);
  if (rt === undefined) return `Instance ${instanceId}: not found`;
  const rec = rt.record;
  const open = (rt.lastReplay?.ops ?? []).filter((op) => !op.done).map((op) => `#${op.id} ${op.kind}${'name' in op ? ` ${op.name}` : ''}`);
  const timers = engine.timers.forInstance(instanceId).map((t) => `#${t.timerId} at ${new Date(t.fireAt).toISOString()}`);
  const entityQueues = [...engine.entities.values()]
    .filter((e) => e.record.lockedBy === instanceId || e.queue.some((q) => q.message.parent === instanceId))
    .map((e) => `${e.id} lockedBy=${e.record.lockedBy ?? '-'} queued=${e.queue.length}`);
  return [
    `Instance ${instanceId} (${rec.name}) status=${rec.status} execution=${rec.executionId} now=${new Date(engine.now()).toISOString()}`,
    `output=${rec.output ?? 'null'} customStatus=${rec.customStatus ?? 'null'}`,
    `history (${rec.history.length} events):`,
    ...rec.history.map(line),
    `inbox (${rt.inbox.length}): ${rt.inbox.map((i) => names[i.event.EventType] ?? '?').join(', ') || '-'}`,
    `waiting on: ${open.join(', ') || '-'}`,
    `timers: ${timers.join(', ') || '-'}`,
    `outbox: ${rt.outbox.map((o) => (o.to === 'entity' ? `→${o.target} ${o.message.kind}` : `→${o.target.instanceId}`)).join(', ') || '-'}`,
    `entities: ${entityQueues.join('; ') || '-'}`,
    `engine: idle=${engine.idle()} activitiesBusy=${engine.activities.busy}`,
  ].join('\n');
}
