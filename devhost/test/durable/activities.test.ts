/**
 * Activity concurrency through the real durable-functions code: host.json
 * `maxConcurrentActivityFunctions` caps how many activity functions run at once.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.mock factories run before imports
jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true });

import { parseHostConfig } from '../../app/hostConfig';
import { readDurableSettings } from '../../durable/settings';
import { crossCheck, runUntil, startEngine } from './support/engineHarness';

afterEach(() => {
  expect(crossCheck.take()).toEqual([]);
});

test('a fan-out wider than maxConcurrentActivityFunctions runs exactly that many activities at once, never more', async () => {
  const { limits } = readDurableSettings(
    parseHostConfig({ extensions: { durableTask: { maxConcurrentActivityFunctions: 3 } } }).durableTask,
    {},
  );
  expect(limits.activities).toBe(3);
  const h = await startEngine({ limits });
  // Each activity holds its slot for 40 ms of real time, so 12 of them overlap unless the engine limits them.
  const id = await h.client.start('fanOutTracked', { input: JSON.stringify({ width: 12, ms: 40 }) });
  const status = await runUntil(h, id);
  expect(status.runtimeStatus).toBe('Completed');
  const runningAtStart = status.output as number[];
  expect(runningAtStart).toHaveLength(12);
  expect(Math.max(...runningAtStart)).toBe(3);
});
