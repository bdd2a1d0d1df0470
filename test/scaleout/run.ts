/**
 * One scale-out run: N instances on one storage account (behind a counting proxy, so every storage
 * transaction is counted by resource), a front door, every capability's load at once, the chaos
 * driver, then a drain, a scale-in to zero (every instance stopped gracefully, so what each held is
 * given back or logged) and the checks. The bounded CI run (scaleout.test.ts) and `npm run soak`
 * (soak.ts) both run this.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { startAzurite } from '../../devhost/azurite';
import { type ChaosPlan, Lives, runChaos } from './chaos';
import { Cluster, type HostKind } from './cluster';
import { startFrontDoor } from './frontDoor';
import { type StorageRequest, startStorageTap } from './storageTap';
import { type Capability, History, RecordingClient, sleep } from './history';
import type { CheckReport, RunContext, Workload } from './workload';

export interface RunOptions {
  readonly kind: HostKind;
  readonly instances: number;
  readonly loadMs: number;
  readonly chaos: ChaosPlan;
  readonly workloads: readonly Workload[];
  /** Multiplies each workload's concurrency (1 for the bounded run). */
  readonly scale?: number;
  /** How long the drain may take. */
  readonly drainMs: number;
  /** Host settings beyond the workloads' (e.g. Durable tuning through AzureFunctionsJobHost__…). */
  readonly settings?: Readonly<Record<string, string>>;
  /** Where the history and each instance's output are written (none when absent). */
  readonly outDir?: string;
  /** Keep the storage (Azurite's files) in outDir/azurite, for a look after the run. */
  readonly keepStorage?: boolean;
  readonly say: (message: string) => void;
}

export interface RunResult {
  readonly reports: readonly CheckReport[];
  readonly violations: number;
  /** Answered operations per capability (and per kind). */
  readonly operations: Readonly<Record<string, number>>;
  /** Storage transactions during the load, by resource (`table:gates`, `queue:jobs-work-0`, …). */
  readonly storageByResource: ReadonlyMap<string, number>;
  readonly loadSeconds: number;
  readonly kills: number;
  readonly scaleIns: number;
  /** Wall-clock seconds of the whole run (start-up to checks). */
  readonly seconds: number;
  readonly taskHub: string;
}

function resourceOf(r: StorageRequest): string {
  const segment = r.path.split('?')[0]?.split('/')[2] ?? '';
  return `${r.service}:${segment
    .replace(/\(.*$/, '')
    .replace(/-control-\d+$/, '-control-N')
    .replace(/^jobs-work-\d+$/, 'jobs-work-N')
    .replace(/^jobs-work-r-\d+$/, 'jobs-work-r-N')}`;
}

export async function scaleOutRun(options: RunOptions): Promise<RunResult> {
  const began = Date.now();
  const say = options.say;
  const azurite = await startAzurite(
    options.keepStorage === true && options.outDir !== undefined ? { location: join(options.outDir, 'azurite') } : {},
  );
  const tap = await startStorageTap(azurite.ports, options.instances);
  const taskHub = `so${randomBytes(4).toString('hex')}`;
  const settings = Object.assign({}, ...options.workloads.map((w) => w.settings ?? {}), options.settings) as Record<string, string>;
  let cluster: Cluster | undefined;
  let frontDoor: Awaited<ReturnType<typeof startFrontDoor>> | undefined;
  const history = new History();
  try {
    say(
      `starting ${options.instances} ${options.kind === 'real' ? 'real Functions hosts' : 'devhosts'} on one storage account (task hub ${taskHub})`,
    );
    cluster = await Cluster.start({
      kind: options.kind,
      instances: options.instances,
      storage: (i) => tap.connectionString(i),
      taskHub,
      settings,
    });
    const live = cluster;
    const lives = new Lives(live);
    for (const inst of live.instances) lives.begin(inst.index);
    frontDoor = await startFrontDoor(() => live.liveUrls());
    const client = new RecordingClient(history, {
      frontDoor: frontDoor.url,
      instanceUrl: (i) => live.instances[i]?.baseUrl,
      keys: live.keys,
    });
    const loadEnded = new AbortController();
    const ctx: RunContext = {
      kind: options.kind,
      client,
      history,
      instances: options.instances,
      isUp: (i) => live.instances[i]?.up === true,
      // The checkers and workloads read storage directly, around the tap.
      storage: azurite.connectionString,
      taskHub,
      loadMs: options.loadMs,
      scale: options.scale ?? 1,
      loadEnded: loadEnded.signal,
      say,
    };
    for (const w of options.workloads) await w.setup(ctx);
    say(`load: ${options.workloads.map((w) => w.capability).join(', ')} for ${Math.round(options.loadMs / 1000)} s`);
    tap.take();
    const loadStart = Date.now();
    const running = options.workloads.map((w) =>
      w.run(ctx).then(
        () => ctx.loadEnded.aborted && say(`${w.capability}: load ended, after ${Math.round((Date.now() - loadStart) / 1000)} s`),
        (err: unknown) => say(`${w.capability} load failed: ${String(err)}`),
      ),
    );
    const chaos = runChaos(live, lives, history, options.chaos, options.loadMs, say);
    await sleep(options.loadMs);
    loadEnded.abort();
    await chaos;
    await Promise.all(running);
    const loadSeconds = (Date.now() - loadStart) / 1000;
    const storageByResource = new Map<string, number>();
    for (const r of tap.take()) storageByResource.set(resourceOf(r), (storageByResource.get(resourceOf(r)) ?? 0) + 1);
    say('drain: letting the started work finish');
    const deadline = Date.now() + options.drainMs;
    await Promise.all(options.workloads.map((w) => w.drain(ctx, deadline)));
    say('scale-in to zero: stopping every instance gracefully');
    for (const inst of live.instances) {
      if (!inst.up) continue;
      await live.stop(inst.index);
      lives.end(inst.index, 'stop');
    }
    const reports: CheckReport[] = [];
    for (const w of options.workloads)
      reports.push(await w.check(ctx, { history, lives: lives.all(), sequenceWrites: tap.sequenceWrites }));
    if (options.outDir !== undefined) {
      mkdirSync(options.outDir, { recursive: true });
      history.save(join(options.outDir, 'history.jsonl'));
      const { writeFileSync } = await import('node:fs');
      for (const life of lives.all()) writeFileSync(join(options.outDir, `instance-${life.instance}-${life.startedAt}.log`), life.output);
    }
    const violations = reports.reduce((n, r) => n + r.invariants.reduce((m, i) => m + i.violations.length, 0), 0);
    return {
      reports,
      violations,
      operations: countOperations(history),
      storageByResource,
      loadSeconds,
      kills: history.of('chaos', 'killed').length,
      scaleIns: history.of('chaos', 'stopped').length,
      seconds: (Date.now() - began) / 1000,
      taskHub,
    };
  } finally {
    await frontDoor?.close();
    await cluster?.dispose();
    await tap.close();
    await azurite.stop();
  }
}

function countOperations(history: History): Record<string, number> {
  const out: Record<string, number> = {};
  for (const op of history.ops) {
    if (op.cap === 'chaos' || op.status === undefined) continue;
    const key: `${Capability}` = op.cap;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** Which part of the app a storage resource (`resourceOf`) serves, for the capacity figures. */
export function ownerOf(resource: string, taskHub: string): string {
  const [service = '', name = ''] = resource.split(':');
  if (name.toLowerCase().startsWith(taskHub.toLowerCase())) return 'durable task hub';
  const owners: Record<string, string> = {
    'table:sequences': 'sequences',
    'table:idempotency': 'idempotency keys (sequences, counters)',
    'table:counters': 'counters',
    'table:counterdata': 'counters',
    'table:counterdirty': 'counters',
    'table:gates': 'gates',
    'queue:gate-actions': 'gates',
    'table:schedules': 'schedules',
    'queue:app-scaleout': 'schedules',
    'table:jobs': 'jobs',
    'table:jobprocessors': 'jobs',
    'table:jobresults': 'jobs',
    'blob:jobs': 'jobs',
    'blob:secrets': 'jobs',
    'blob:streams': 'streams',
    'table:streamroutes': 'streams',
    'table:$batch': 'entity-group transactions (gates, counters, jobs, Durable history)',
    'blob:azure-webjobs-hosts': 'host (timer locks and status)',
    'table:Tables': 'host (table creation)',
  };
  if (owners[resource] !== undefined) return owners[resource];
  if (service === 'queue' && name.startsWith('jobs-work')) return 'jobs';
  return 'other';
}

/** The report a person reads: each invariant, held or not, with its figures. */
export function formatReport(result: RunResult): string {
  const lines: string[] = [];
  for (const report of result.reports) {
    lines.push(`${report.capability} (${result.operations[report.capability] ?? 0} operations answered)`);
    for (const inv of report.invariants) {
      const figures = Object.entries(inv.figures)
        .map(([k, v]) => `${k} ${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v}`)
        .join(', ');
      lines.push(`  ${inv.violations.length === 0 ? 'ok  ' : 'FAIL'} ${inv.name}${figures === '' ? '' : ` — ${figures}`}`);
      for (const v of inv.violations) lines.push(`       ${v}`);
    }
  }
  lines.push(
    `${result.violations} violations; load ${result.loadSeconds.toFixed(0)} s, ${result.kills} kills, ${result.scaleIns} scale-ins; run ${result.seconds.toFixed(0)} s`,
  );
  return lines.join('\n');
}
