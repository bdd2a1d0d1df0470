/**
 * Waiting for something a Durable-backed capability does in the background. A wait has no time
 * budget of its own (test/support/waits.ts): when its test ends first (jest's timeout, the safety
 * net), it is given up with a report of every orchestration still running or pending, each with the
 * tail of its history, so a stuck orchestration is reported with what it did and what it waits for,
 * not as a bare timeout.
 */
import { mapLimited } from '../../../shared/mapLimited';
import { until as untilCondition } from '../../support/waits';
import { type E2eHost, runningHosts } from './harness';
import { requestJson } from './http';

interface InstanceStatus {
  readonly name: string;
  readonly instanceId: string;
  readonly runtimeStatus: string;
  readonly customStatus?: unknown;
  readonly lastUpdatedTime?: string;
  readonly historyEvents?: readonly HistoryEntry[];
}

interface HistoryEntry {
  readonly EventType?: string;
  readonly FunctionName?: string;
  readonly Name?: string;
  readonly Timestamp?: string;
  readonly FireAt?: string;
}

const hook = '/runtime/webhooks/durabletask/instances';
const historyTail = 12;
const instancesShown = 8;
/** How many running instances are read to pick the ones shown (a shared or external host holds many). */
const instancesRead = 500;

/**
 * Polls `probe` until it returns something other than undefined. Given up (its test ended first),
 * it reports the unfinished orchestrations of every host this test file has running.
 * `_budgetMs` is ignored, kept so older callers compile: the jest timeout is the only limit.
 */
export function until<T>(what: string, probe: () => Promise<T | undefined>, _budgetMs?: number, everyMs = 100): Promise<T> {
  return untilCondition(what, probe, { everyMs, report: orchestrationReport });
}

/**
 * Waits until `isDone` holds for every key, each read on its own (a run's status, say), for things
 * that stay done once done. Each poll reads only the keys not yet seen done, `batch` at a time, and
 * stops at the first batch with one still pending: a slow finish is waited for with a batch of reads
 * a poll instead of every key's. On the CPU-bound suite, reading all 600–1,000 runs of a gate every
 * poll took the CPU from the very release (or recovery) the test waited for. The caller reads the
 * keys again for its assertions.
 */
export async function untilEach<K>(
  what: string,
  keys: readonly K[],
  isDone: (key: K) => Promise<boolean>,
  { batch = 32, everyMs = 100 }: { batch?: number; everyMs?: number } = {},
): Promise<void> {
  const done = new Set<K>();
  await until(
    what,
    async () => {
      for (let i = 0; i < keys.length; i += batch) {
        const pending = keys.slice(i, i + batch).filter((key) => !done.has(key));
        const seen = await mapLimited(pending, batch, isDone);
        pending.forEach((key, j) => {
          if (seen[j] === true) done.add(key);
        });
        if (seen.includes(false)) return undefined;
      }
      return true;
    },
    undefined,
    everyMs,
  );
}

/** The unfinished orchestrations of every host this test file has running. */
export async function orchestrationReport(): Promise<string> {
  const reports = await Promise.all(runningHosts().map(async (host) => `${host.baseUrl}: ${await unfinishedOrchestrations(host)}`));
  return reports.join('\n');
}

/** The host's running and pending orchestrations, the most recently updated first, each with the tail of its history. */
async function unfinishedOrchestrations(host: E2eHost): Promise<string> {
  try {
    const list = await requestJson<InstanceStatus[]>(host, 'GET', `${hook}?runtimeStatus=Running,Pending&top=${instancesRead}`, {
      key: 'admin',
    });
    if (list.status !== 200 || !Array.isArray(list.body)) return `(could not list orchestrations: HTTP ${list.status})`;
    // Entities ("@name@key") run for as long as they exist; the orchestrations a test just started
    // are the most recently updated, on a host other files (or other runs) use too.
    const orchestrations = list.body
      .filter((s) => !s.instanceId.startsWith('@'))
      .sort((a, b) => (b.lastUpdatedTime ?? '').localeCompare(a.lastUpdatedTime ?? ''));
    if (orchestrations.length === 0) return 'No orchestration is running or pending.';
    const shown = await Promise.all(orchestrations.slice(0, instancesShown).map((s) => describeInstance(host, s.instanceId)));
    const more = orchestrations.length > instancesShown ? `\n… and ${orchestrations.length - instancesShown} more, updated earlier` : '';
    return `Orchestrations still running or pending:\n${shown.join('\n')}${more}`;
  } catch (err) {
    return `(could not list orchestrations: ${err instanceof Error ? err.message : String(err)})`;
  }
}

async function describeInstance(host: E2eHost, instanceId: string): Promise<string> {
  const res = await requestJson<InstanceStatus>(host, 'GET', `${hook}/${encodeURIComponent(instanceId)}?showHistory=true&showInput=false`, {
    key: 'admin',
  });
  // 202 is how the API answers for an instance that is still running.
  if ((res.status !== 200 && res.status !== 202) || typeof res.body !== 'object') return `- ${instanceId}: HTTP ${res.status}`;
  const s = res.body;
  const history = (s.historyEvents ?? []).slice(-historyTail).map((e) => {
    const target = e.FunctionName ?? e.Name ?? (e.FireAt === undefined ? '' : `fire at ${e.FireAt}`);
    return `    ${e.Timestamp ?? ''} ${e.EventType ?? '?'}${target === '' ? '' : ` ${target}`}`;
  });
  const custom = s.customStatus === undefined || s.customStatus === null ? '' : ` custom status ${JSON.stringify(s.customStatus)}`;
  return [`- ${s.name} ${instanceId}: ${s.runtimeStatus}, last updated ${s.lastUpdatedTime ?? '?'}${custom}`, ...history].join('\n');
}
