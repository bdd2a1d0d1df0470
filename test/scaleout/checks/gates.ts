/**
 * Gates across instances (docs/gates.md, "Guarantees and limits"):
 * - every registered run proceeds, exactly once, with the first release of its generation or later
 *   (one run row per run id, one release row per generation);
 * - a run registered after the release (a late joiner) proceeds at once, marked late;
 * - every `enqueue` action is performed at least once (a `gate-actions` message carrying the run id)
 *   and its outcome is recorded once (the run row's `actionState` is `done`);
 * - a release reaches the long polls and event streams waiting on every instance: each watcher on
 *   an instance that stayed up hears of it. The figure: how long after the release was written
 *   (its `releasedAt`) each watcher heard of it, on the releasing instance and on the others.
 */
import { capped, type CheckReport, invariant, percentile } from '../workload';

export interface RegisteredRun {
  readonly gate: string;
  readonly runId: string;
  readonly action: 'none' | 'enqueue';
  /** Registered after its generation's release was answered. */
  readonly late: boolean;
  /** A late joiner's status read right after its registration: proceeded then? */
  readonly proceededAtOnce?: boolean;
  readonly lateFlag?: boolean;
}

export interface StoredRun {
  readonly gate: string;
  readonly runId: string;
  readonly generation: number;
  readonly late: boolean;
  readonly actionType: string;
  readonly actionState: string;
}

export interface RunView {
  readonly gate: string;
  readonly runId: string;
  readonly state: string;
  /** The generation of the release it proceeded with. */
  readonly releaseGeneration: number | undefined;
}

export interface Watcher {
  readonly gate: string;
  readonly generation: number;
  readonly instance: number;
  readonly kind: 'longPoll' | 'events';
  /** When it heard of the release (undefined: never). */
  readonly heardAt: number | undefined;
  /** Its instance went down while it waited (a kill or a stop): not expected to hear. */
  readonly instanceLost: boolean;
}

export interface Release {
  readonly gate: string;
  readonly generation: number;
  /** The release's own time (`releasedAt`). */
  readonly at: number;
  /** The instance that answered the release call. */
  readonly instance: number | undefined;
}

export interface GateFacts {
  readonly registered: readonly RegisteredRun[];
  readonly stored: readonly StoredRun[];
  readonly views: readonly RunView[];
  /** Release rows, by gate: the generations released. */
  readonly releaseRows: ReadonlyMap<string, readonly number[]>;
  /** `gate-actions` messages' run ids (one entry per message). */
  readonly actionMessages: readonly { readonly gate: string; readonly runId: string }[];
  readonly releases: readonly Release[];
  readonly watchers: readonly Watcher[];
}

const key = (gate: string, runId: string): string => `${gate}/${runId}`;

function runInvariants(facts: GateFacts) {
  const stored = new Map<string, StoredRun[]>();
  for (const s of facts.stored) stored.set(key(s.gate, s.runId), [...(stored.get(key(s.gate, s.runId)) ?? []), s]);
  const views = new Map(facts.views.map((v) => [key(v.gate, v.runId), v]));
  const proceedOnce: string[] = [];
  const late: string[] = [];
  for (const run of facts.registered) {
    const rows = stored.get(key(run.gate, run.runId)) ?? [];
    const view = views.get(key(run.gate, run.runId));
    if (rows.length !== 1) {
      proceedOnce.push(`${run.gate}/${run.runId}: ${rows.length} run rows`);
      continue;
    }
    const row = rows[0] as StoredRun;
    const released = facts.releaseRows.get(run.gate) ?? [];
    const first = released.filter((g) => g >= row.generation).sort((a, b) => a - b)[0];
    if (first === undefined) proceedOnce.push(`${run.gate}/${run.runId}: generation ${row.generation} was never released`);
    else if (view === undefined || view.state === 'waiting')
      proceedOnce.push(
        `${run.gate}/${run.runId}: ${view === undefined ? 'no status' : 'still waiting'} after generation ${first} was released`,
      );
    else if (view.releaseGeneration !== first)
      proceedOnce.push(`${run.gate}/${run.runId}: proceeded with generation ${view.releaseGeneration}'s release, not ${first}'s`);
    if (run.late && (run.proceededAtOnce !== true || row.late !== true || run.lateFlag !== true))
      late.push(
        `${run.gate}/${run.runId} registered after the release: proceeded at once ${run.proceededAtOnce}, late ${row.late}/${run.lateFlag}`,
      );
  }
  const dupReleases = [...facts.releaseRows].flatMap(([gate, gens]) =>
    gens.filter((g, i) => gens.indexOf(g) !== i).map((g) => `${gate}: generation ${g} has two release rows`),
  );
  return { proceedOnce: [...proceedOnce, ...dupReleases], late };
}

function actionInvariant(facts: GateFacts) {
  const messages = new Map<string, number>();
  for (const m of facts.actionMessages) messages.set(key(m.gate, m.runId), (messages.get(key(m.gate, m.runId)) ?? 0) + 1);
  const stored = new Map(facts.stored.map((s) => [key(s.gate, s.runId), s]));
  const violations: string[] = [];
  let performed = 0;
  let duplicates = 0;
  for (const run of facts.registered.filter((r) => r.action === 'enqueue')) {
    const n = messages.get(key(run.gate, run.runId)) ?? 0;
    const row = stored.get(key(run.gate, run.runId));
    if (n === 0) violations.push(`${run.gate}/${run.runId}: its enqueue action was never performed`);
    if (row !== undefined && row.actionState !== 'done')
      violations.push(`${run.gate}/${run.runId}: outcome recorded as ${row.actionState}`);
    performed += n > 0 ? 1 : 0;
    duplicates += Math.max(0, n - 1);
  }
  for (const m of messages.keys())
    if (!facts.registered.some((r) => key(r.gate, r.runId) === m)) violations.push(`${m}: an action message for a run never registered`);
  return { violations, performed, duplicates };
}

function watcherInvariant(facts: GateFacts) {
  const violations: string[] = [];
  const same: number[] = [];
  const other: number[] = [];
  for (const w of facts.watchers) {
    const release = facts.releases.find((r) => r.gate === w.gate && r.generation === w.generation);
    if (release === undefined) continue;
    if (w.heardAt === undefined) {
      if (!w.instanceLost)
        violations.push(`${w.gate} generation ${w.generation}: a ${w.kind} watcher on instance ${w.instance} never heard of the release`);
      continue;
    }
    (w.instance === release.instance ? same : other).push(Math.max(0, w.heardAt - release.at));
  }
  same.sort((a, b) => a - b);
  other.sort((a, b) => a - b);
  return {
    violations,
    figures: {
      watchers: facts.watchers.length,
      heard: same.length + other.length,
      'same instance p50 ms': percentile(same, 50),
      'same instance max ms': percentile(same, 100),
      'other instances p50 ms': percentile(other, 50),
      'other instances p99 ms': percentile(other, 99),
      'other instances max ms': percentile(other, 100),
    },
  };
}

export function checkGates(facts: GateFacts): CheckReport {
  const runs = runInvariants(facts);
  const actions = actionInvariant(facts);
  const watch = watcherInvariant(facts);
  const lateCount = facts.registered.filter((r) => r.late).length;
  return {
    capability: 'gates',
    invariants: [
      invariant('every registered run proceeds exactly once per generation', capped(runs.proceedOnce), {
        runs: facts.registered.length,
        generations: [...facts.releaseRows.values()].reduce((n, g) => n + g.length, 0),
      }),
      invariant('late joiners proceed at once', capped(runs.late), { late: lateCount }),
      invariant('each action performed at least once and recorded once', capped(actions.violations), {
        actions: facts.registered.filter((r) => r.action === 'enqueue').length,
        performed: actions.performed,
        duplicateDeliveries: actions.duplicates,
      }),
      invariant('a release reaches watchers and long polls on every instance', capped(watch.violations), watch.figures),
    ],
  };
}
