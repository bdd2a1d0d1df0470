/**
 * Waiting for something a Durable-backed capability does in the background. When the wait runs out,
 * the error carries every orchestration still running or pending with the tail of its history, so a
 * stuck orchestration is reported with what it did and what it waits for, not as a bare timeout.
 */
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

/**
 * Polls `probe` until it returns something other than undefined. On timeout the error names what was
 * awaited and lists the unfinished orchestrations of every host this test file has running.
 */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const reports = await Promise.all(runningHosts().map(async (host) => `${host.baseUrl}: ${await unfinishedOrchestrations(host)}`));
      throw new Error([`timed out after ${timeoutMs} ms waiting for ${what}`, ...reports].join('\n'));
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The host's running and pending orchestrations, each with the tail of its history. */
async function unfinishedOrchestrations(host: E2eHost): Promise<string> {
  try {
    const list = await requestJson<InstanceStatus[]>(host, 'GET', `${hook}?runtimeStatus=Running,Pending&top=${instancesShown + 1}`, {
      key: 'admin',
    });
    if (list.status !== 200 || !Array.isArray(list.body)) return `(could not list orchestrations: HTTP ${list.status})`;
    if (list.body.length === 0) return 'No orchestration is running or pending.';
    const shown = await Promise.all(list.body.slice(0, instancesShown).map((s) => describeInstance(host, s.instanceId)));
    const more = list.body.length > instancesShown ? `\n… and more` : '';
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
