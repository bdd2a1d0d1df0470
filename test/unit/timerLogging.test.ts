/**
 * Idle timers write nothing (#37): the host's own "Executed 'Functions.<timer>'" line for each run of
 * the frequent timers is held back by host.json (`Function.<name>` at Warning: failures still show),
 * while the app's own lines, written only when a run did something (`jobs.pushed`, `jobs.reconciled`,
 * `counter.rollup_run`), keep Information (`Function.<name>.User`). Both hosts apply host.json's
 * categories (the devhost: devhost/app/logLevels.ts, tested in devhost/test/timers.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { categoryThreshold } from '../../devhost/app/logLevels';

const hostJson = JSON.parse(readFileSync(join(__dirname, '..', '..', 'host.json'), 'utf8')) as Record<string, unknown>;

describe('host.json keeps idle timers quiet', () => {
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
});
