/**
 * The bounded scale-out run (#38): three instances of the app on one storage account behind a
 * round-robin front door, every capability's load at once, one instance SIGKILLed and started again
 * during it, then a drain, a graceful stop of every instance and every capability's checker. On the
 * real Functions host (an optional tool: FUNCTIONS_HOST_BUILD and dotnet; required when CI=true) all
 * capabilities run with one Durable task hub; on the devhost, whose Durable engine is one process's,
 * those that share no Durable state across instances (test/scaleout/cluster.ts). The long version is
 * `npm run soak`.
 */
import { describeWithTool } from '../support/optionalTool';
import { realHostTool } from '../support/realHostTool.cjs';
import { formatReport, type RunResult, scaleOutRun } from './run';
import { workloadsFor } from './workloads';

const say = (message: string): void => void process.stderr.write(`[scale-out ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

function violations(result: RunResult): string[] {
  return result.reports.flatMap((r) => r.invariants.flatMap((i) => i.violations.map((v) => `${r.capability}: ${i.name}: ${v}`)));
}

/**
 * The drain waits until every capability's started work has finished (each workload's drain polls its
 * condition); this is only the point where it would stop waiting, and the tests' jest timeouts are
 * the safety net above it: a busy machine makes a run longer, never red (the real host's bounded run
 * took 381 s beside a soak of three more real hosts, where a 360 s timeout cut it short).
 */
const drainNetMs = 600_000;
const testNetMs = 1_200_000;

function report(result: RunResult): void {
  process.stderr.write(`${formatReport(result)}\n`);
}

describeWithTool(realHostTool, 'scale-out on the real Functions host', () => {
  test(
    '3 instances, one killed and restarted under load: every invariant of every capability holds',
    async () => {
      const result = await scaleOutRun({
        kind: 'real',
        instances: 3,
        loadMs: 60_000,
        chaos: { kills: 1, scaleIns: 0 },
        workloads: workloadsFor('real', { probe: false }),
        drainMs: drainNetMs,
        say,
      });
      report(result);
      expect(violations(result)).toEqual([]);
      expect(result.kills).toBe(1);
      // Every capability was exercised: each has answered operations.
      for (const capability of ['sequences', 'counters', 'gates', 'jobs', 'schedules', 'streams'])
        expect({ capability, answered: (result.operations[capability] ?? 0) > 0 }).toEqual({ capability, answered: true });
    },
    testNetMs,
  );
});

describe('scale-out on the devhost', () => {
  test(
    '3 instances, one killed and one stopped under load: sequences, counters, gates and jobs hold',
    async () => {
      const result = await scaleOutRun({
        kind: 'devhost',
        instances: 3,
        loadMs: 40_000,
        chaos: { kills: 1, scaleIns: 1 },
        workloads: workloadsFor('devhost'),
        drainMs: drainNetMs,
        say,
      });
      report(result);
      expect(violations(result)).toEqual([]);
      expect({ kills: result.kills, scaleIns: result.scaleIns }).toEqual({ kills: 1, scaleIns: 1 });
      for (const capability of ['sequences', 'counters', 'gates', 'jobs'])
        expect({ capability, answered: (result.operations[capability] ?? 0) > 0 }).toEqual({ capability, answered: true });
    },
    testNetMs,
  );
});
