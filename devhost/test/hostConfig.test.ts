/**
 * host.json through one schema (devhost/app/hostConfig.ts): the real host's defaults, values from
 * JSON or from `AzureFunctionsJobHost__…` overrides (strings), keys matched without regard to case,
 * and the values the real host refuses at start refused here too, naming the setting
 * (devhost/docs/real-host.md#hostjson).
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import { parseHostConfig, readHostConfig } from '../app/hostConfig';
import { isDevhostError } from '../errors';
import { startFixture } from './support';

const refusal = (json: Record<string, unknown>): string => {
  try {
    parseHostConfig(json);
  } catch (err) {
    expect(isDevhostError(err, 'SettingsInvalid')).toBe(true);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(json)}`);
};

describe('host.json defaults', () => {
  test('an empty host.json gets the real host defaults', () => {
    const config = parseHostConfig({});
    expect(config.routePrefix).toBe('api');
    expect(config.queues).toEqual({
      batchSize: 16,
      newBatchThreshold: 8 * availableParallelism(),
      maxPollingIntervalMs: 60_000,
      visibilityTimeoutMs: 0,
      maxDequeueCount: 5,
      messageEncoding: 'base64',
    });
    expect(config.durableTask.hubName).toBe('TestHubName');
    // Concurrency left unset takes the engine's defaults (devhost/durable/settings.ts).
    expect(config.durableTask.maxConcurrentActivityFunctions).toBeUndefined();
  });

  test("this project's own host.json reads as before (its %TALLYHO_TASK_HUB% resolved)", () => {
    const config = readHostConfig(join(__dirname, '..', '..'), { TALLYHO_TASK_HUB: 'tallyho' });
    expect(config.routePrefix).toBe('api');
    expect(config.queues).toEqual({
      batchSize: 16,
      newBatchThreshold: 8,
      maxPollingIntervalMs: 5000,
      visibilityTimeoutMs: 30_000,
      maxDequeueCount: 5,
      messageEncoding: 'base64',
    });
    expect(config.durableTask.hubName).toBe('tallyho');
  });
});

describe('host.json values as the host binds them', () => {
  test('numbers and TimeSpans come as JSON or as override strings; keys and encodings match without regard to case', () => {
    const config = parseHostConfig({
      Extensions: {
        Queues: {
          BatchSize: '8',
          newBatchThreshold: '0',
          MaxPollingInterval: '00:00:02.5',
          visibilityTimeout: 1500,
          messageEncoding: 'None',
        },
        DurableTask: { HubName: 'Hub2', maxConcurrentActivityFunctions: '3', storageProvider: { ConnectionName: 'Other' } },
      },
    });
    expect(config.queues).toEqual({
      batchSize: 8,
      newBatchThreshold: 0,
      maxPollingIntervalMs: 2500,
      visibilityTimeoutMs: 1500,
      maxDequeueCount: 5,
      messageEncoding: 'none',
    });
    expect(config.durableTask).toMatchObject({
      hubName: 'Hub2',
      maxConcurrentActivityFunctions: 3,
      storageProvider: { connectionName: 'Other' },
    });
  });

  test("an empty route prefix stays empty (functions at the root), while '' for a number means unset", () => {
    expect(parseHostConfig({ extensions: { http: { routePrefix: '' } } }).routePrefix).toBe('');
    expect(parseHostConfig({ extensions: { queues: { batchSize: '' } } }).queues.batchSize).toBe(16);
  });
});

describe('what the real host refuses at start, the devhost refuses, naming the setting', () => {
  test.each([
    [{ queues: { batchSize: 64 } }, 'extensions.queues.batchSize: must be an integer from 1 to 32 (got 64)'],
    [{ queues: { batchSize: 0 } }, 'extensions.queues.batchSize: must be an integer from 1 to 32 (got 0)'],
    [{ queues: { batchSize: 16.5 } }, 'extensions.queues.batchSize: must be an integer from 1 to 32 (got 16.5)'],
    [{ queues: { newBatchThreshold: -1 } }, 'extensions.queues.newBatchThreshold: must be an integer, 0 or more (got -1)'],
    [{ queues: { maxPollingInterval: '00:00:00.05' } }, 'extensions.queues.maxPollingInterval: must not be less than 00:00:00.1'],
    [{ queues: { maxPollingInterval: 'soon' } }, 'extensions.queues.maxPollingInterval: must be a TimeSpan like "00:00:30"'],
    [{ queues: { maxDequeueCount: 0 } }, 'extensions.queues.maxDequeueCount: must be an integer, 1 or more (got 0)'],
    [{ queues: { messageEncoding: 'utf8' } }, 'extensions.queues.messageEncoding: must be "base64" or "none" (got "utf8")'],
    [
      { durableTask: { storageProvider: { controlQueueBatchSize: 64 } } },
      'extensions.durableTask.storageProvider.controlQueueBatchSize: must be an integer from 1 to 32 (got 64)',
    ],
    [
      { durableTask: { storageProvider: { partitionCount: 17 } } },
      'extensions.durableTask.storageProvider.partitionCount: must be an integer from 1 to 16 (got 17)',
    ],
    [
      { durableTask: { storageProvider: { controlQueueVisibilityTimeout: '02:00:00' } } },
      'extensions.durableTask.storageProvider.controlQueueVisibilityTimeout: must be between 1 and 60 minutes',
    ],
    [
      { durableTask: { maxConcurrentActivityFunctions: 0 } },
      'extensions.durableTask.maxConcurrentActivityFunctions: must be an integer, 1 or more (got 0)',
    ],
    [
      { durableTask: { hubName: 'my-hub' } },
      "extensions.durableTask.hubName: Task hub name 'my-hub' should contain only alphanumeric characters, start with a letter, and have length between 3 and 45.",
    ],
  ])('%j', (extensions, reason) => {
    expect(refusal({ extensions })).toContain(`host.json ${reason}`);
  });

  test('every refused value is named at once', () => {
    const message = refusal({ extensions: { queues: { batchSize: 64, maxDequeueCount: 0 } } });
    expect(message).toMatch(/batchSize.*; host\.json extensions\.queues\.maxDequeueCount/);
  });

  test('a host with such a host.json does not start (the real host does not either)', async () => {
    await expect(
      startFixture('queues', { env: { AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueBatchSize: '64' } }),
    ).rejects.toThrow(/controlQueueBatchSize: must be an integer from 1 to 32 \(got "64"\)/);
  });
});
