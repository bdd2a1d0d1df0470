'use strict';
/**
 * Load for sequence allocators, shared by the in-process instances of the integration tests and by
 * the separate OS processes they spawn. As a module it drives any allocator; run with `node` it is
 * one whole instance built from the compiled app (dist/, so `npm run build` first):
 *
 *   node test/support/sequenceLoad.cjs '{"connection":"…","table":"…","sequence":"…","numbers":20000,"seed":1}'
 *
 * (plus any driveAllocator option, and `env` for settings such as TALLYHO_STORAGE_MAX_TRIES) and prints one JSON line: the numbers in the order this instance issued them, what close()
 * returned or abandoned, and the allocator's statistics.
 */
const path = require('node:path');

/**
 * `callers` concurrent loops take 1..maxCount numbers at a time until `numbers` have been issued.
 * A retryable failure (a 503) is counted and retried after `retryDelayMs`; anything else ends the
 * run with that error. Numbers are logged in the order the allocator handed them out.
 */
async function driveAllocator(allocator, options) {
  const { numbers, random, callers = 4, maxCount = 20, retryDelayMs = 5 } = options;
  const issued = [];
  const failures = [];
  let requested = 0;
  const loop = async () => {
    while (requested < numbers) {
      const count = Math.min(numbers - requested, 1 + Math.floor(random() * maxCount));
      requested += count;
      for (;;) {
        try {
          const got = await allocator.take(count);
          for (const n of got) issued.push(n);
          // Like separate requests, each loop turn lets I/O (a refill's response) through; a bare
          // promise loop would starve it and no prefetch could ever land in time.
          await new Promise((resolve) => setImmediate(resolve));
          break;
        } catch (err) {
          if (!err || err.retryable !== true) throw err;
          failures.push(err.code);
          await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, loop));
  return { issued, failures };
}

async function main() {
  const options = JSON.parse(process.argv[2] ?? '{}');
  const dist = path.join(__dirname, '..', '..', 'dist', 'shared');
  const { loadAppConfig } = require(path.join(dist, 'app', 'settings.js'));
  const { createStorageClients } = require(path.join(dist, 'storage', 'clients.js'));
  const { SequenceStore } = require(path.join(dist, 'sequences', 'store.js'));
  const { SequenceAllocator } = require(path.join(dist, 'sequences', 'allocator.js'));
  const { occBackoff } = require(path.join(dist, 'retry.js'));
  const { seededRandom, systemClock } = require(path.join(dist, 'clock.js'));
  const { silentLogger } = require(path.join(dist, 'log.js'));

  const config = loadAppConfig({ AzureWebJobsStorage: options.connection, ...(options.env ?? {}) });
  const storage = createStorageClients(config.storage, { retry: config.storageRetry });
  const store = new SequenceStore(() => storage.table(options.table));
  const sequence = await store.read(options.sequence);
  if (sequence === undefined) throw new Error(`sequence ${options.sequence} does not exist`);
  const allocator = new SequenceAllocator({
    store,
    sequence,
    clock: systemClock,
    random: Math.random,
    logger: silentLogger,
    backoff: occBackoff(config.occ),
    instanceId: `process-${process.pid}`,
  });
  const { issued, failures } = await driveAllocator(allocator, { ...options, random: seededRandom(options.seed ?? 1) });
  const report = await allocator.close();
  process.stdout.write(`${JSON.stringify({ issued, failures, report, stats: allocator.stats() })}\n`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err && err.stack ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

module.exports = { driveAllocator };
