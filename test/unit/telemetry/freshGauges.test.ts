/**
 * A gauge whose read failed reports nothing (shared/telemetry/freshGauges.ts): with the SDK's
 * cumulative default an observed gauge kept exporting its last value (the job backlog exported 0
 * three times while storage was down).
 */
import { declareTelemetry, observableGauge, operatorName } from '../../../shared/telemetry/declare';
import { memoryTelemetry } from '../../support/telemetry';

const declarations = declareTelemetry('test.fresh', {
  depth: observableGauge({ name: 'test.depth', unit: '{message}', description: 'A depth.', attributes: { queue: operatorName } }),
});

test('an observed gauge reports what this collection observed, and nothing when its read failed', async () => {
  const memory = memoryTelemetry();
  const { metrics } = memory.telemetry.of(declarations);
  let read: () => Promise<number> = () => Promise.resolve(7);
  metrics.depth.observe(async (report) => {
    const depth = await read().catch(() => undefined);
    if (depth !== undefined) report(depth, { queue: 'q' });
  });
  expect((await memory.collect()).points('test.depth').map((p) => p.value)).toEqual([7]);
  read = () => Promise.reject(new Error('storage down'));
  expect((await memory.collect()).points('test.depth')).toEqual([]);
  read = () => Promise.resolve(3);
  expect((await memory.collect()).points('test.depth').map((p) => p.value)).toEqual([3]);
  await memory.shutdown();
});
