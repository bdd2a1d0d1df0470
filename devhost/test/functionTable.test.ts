import type { HostLogLevel } from '../log';
import { startFixture, uniqueName } from './support';

describe('the function table printed at start', () => {
  test('lists every function with its trigger detail, like func start: HTTP route and methods, queue, schedule, disabled, in error, unsupported', async () => {
    const queue = uniqueName('table');
    const lines: { level: HostLogLevel; message: string }[] = [];
    const host = await startFixture('table', {
      quiet: false,
      log: (level, message) => lines.push({ level, message }),
      env: { TABLE_QUEUE: queue, 'AzureWebJobs.retired.Disabled': 'true' },
    });
    try {
      const messages = lines.map((l) => l.message);
      const start = messages.indexOf('Functions:');
      expect(start).toBeGreaterThan(0);
      const end = messages.indexOf('', start + 2);
      const base = `http://localhost:${host.port}/api`;
      expect(messages.slice(start - 1, end + 1)).toEqual([
        '',
        'Functions:',
        '',
        `\tgetThing: [GET,POST] ${base}/things/{id:int}`,
        `\tkeyed: [GET] ${base}/keyed (function)`,
        `\tjobs: queueTrigger (queue: ${queue})`,
        '\tnightly: timerTrigger (schedule: 0 0 3 * * *)',
        '\twarmup: timerTrigger (schedule: 0 0 0 1 1 *, runOnStartup)',
        '\tretired: httpTrigger [disabled]',
        // The library names the trigger binding itself (with a random suffix).
        expect.stringMatching(
          /^\tbroken: \[error\] function broken binding queueTrigger\w*\.queueName: '%TABLE_UNSET_SETTING%' does not resolve to a value \(app setting TABLE_UNSET_SETTING is not set\)$/,
        ),
        // devhost/docs/real-host.md#routing: the real host refuses routes under its own /admin.
        '\tadminPanel: [error] The specified route conflicts with one or more built in routes.',
        '\tbus: serviceBusTrigger [not supported by the devhost: never triggered]',
        '',
      ]);
      // The table goes to the information stream, not the warning/error one.
      const tableLevels = new Set(lines.slice(start - 1, end + 1).map((l) => l.level));
      expect([...tableLevels]).toEqual(['info']);
    } finally {
      await host.stop();
    }
  });
});
