/**
 * Idle timers write nothing (#37): the host's own "Executed 'Functions.<timer>'" line for each run of
 * the frequent timers is held back by host.json (`Function.<name>` at Warning: failures still show),
 * while the app's own lines, written only when a run did something (`jobs.pushed`, `jobs.reconciled`,
 * `counter.rollup_run`), keep Information (`Function.<name>.User`). Both hosts apply host.json's
 * categories (the devhost: devhost/app/logLevels.ts, tested in devhost/test/timers.test.ts). The
 * Durable Task Framework's own categories are at Warning too; the real host shows it
 * (test/e2e/realHost.test.ts), as the devhost has no such framework.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { categoryThreshold } from '../../devhost/app/logLevels';

const hostJson = JSON.parse(readFileSync(join(__dirname, '..', '..', 'host.json'), 'utf8')) as Record<string, unknown>;

describe('host.json keeps idle timers and the Durable Task Framework quiet', () => {
  it.each(['jobsPush', 'jobsReconcile', 'countersRollup'])(
    '%s: the host line per run at Warning, the app’s own lines at Information',
    (name) => {
      expect(categoryThreshold(hostJson, `Function.${name}`)).toBe('warn');
      expect(categoryThreshold(hostJson, `Function.${name}.User`)).toBe('info');
    },
  );

  it('every other function keeps its lines (an HTTP function, a queue trigger)', () => {
    expect(categoryThreshold(hostJson, 'Function.jobsSubmit')).toBe('info');
    expect(categoryThreshold(hostJson, 'Function.jobsWork0')).toBe('info');
  });

  // Microsoft's advice for production apps (Durable Functions diagnostics, "Durable Task Framework
  // logging"): the framework's own categories at Warning, as their Information events are high-volume.
  // On the real host they were 52,065 of a CI run's 111,886 host log entries (2026-12-01).
  it('the Durable Task Framework at Warning, the extension’s tracking events and the app’s lines at Information', () => {
    expect(categoryThreshold(hostJson, 'DurableTask.Core')).toBe('warn');
    expect(categoryThreshold(hostJson, 'DurableTask.AzureStorage')).toBe('warn');
    expect(categoryThreshold(hostJson, 'Host.Triggers.DurableTask')).toBe('info');
    expect(categoryThreshold(hostJson, 'Function.streamwriter.User')).toBe('info');
  });
});
