/**
 * Scale-out on Azurite: 16 allocator instances in this process and 2 more in separate OS processes
 * (the compiled app, so `npm run build` first), all issuing from one sequence at once. The checks
 * are those of Jepsen's unique-ids workload plus what block allocation promises: no duplicates,
 * strictly increasing per instance, and every number below the high-water mark either issued or in
 * a tail that an instance reported it could not return — nothing else.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { CloseReport } from '../../../shared/sequences/allocator';
import { seededRandom } from '../../../shared/clock';
import { driveAllocator } from '../../support/sequenceLoad.cjs';
import { accountFor, sequenceHarness } from '../../support/sequences';
import { runStorage } from '../../support/storageAccounts';

const root = join(__dirname, '..', '..', '..');
const worker = join(root, 'test', 'support', 'sequenceLoad.cjs');
const perInstance = 20_000;

interface InstanceResult {
  readonly label: string;
  readonly issued: number[];
  readonly failures: string[];
  readonly report: CloseReport;
  readonly stats: { retries412: number; refills: number };
}

function runProcess(label: string, options: Record<string, unknown>): Promise<InstanceResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    // 'close', not 'exit': the child's stdout may still be unread at 'exit' (a partial JSON read
    // failed a CI run), and 'close' waits for its pipes to end.
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`${label} exited with ${code}: ${stderr}`));
        return;
      }
      try {
        resolve({ label, ...(JSON.parse(stdout) as Omit<InstanceResult, 'label'>) });
      } catch (err) {
        reject(new Error(`${label} wrote no result (${String(err)}): ${stdout.slice(0, 200)}`));
      }
    });
  });
}

describe('sequences under scale-out on Azurite', () => {
  it('16 in-process instances and 2 OS processes, 20,000 numbers each: unique, increasing per instance, every gap accounted for', async () => {
    if (!existsSync(join(root, 'dist', 'shared', 'sequences', 'allocator.js'))) {
      throw new Error('dist/ is missing: run `npm run build` before this test (npm test does)');
    }
    const h = sequenceHarness();
    const name = 'orders';
    const start = 1000;
    // Blocks small against 20,000 numbers: every instance refills several times, and they collide.
    await h.create(name, { start, blockSize: { min: 500, max: 5000 } });

    const processes = [1, 2].map((i) =>
      runProcess(`process ${i}`, {
        connection: runStorage(),
        table: h.sequencesTable,
        sequence: name,
        numbers: perInstance,
        seed: 100 + i,
      }),
    );
    const inProcess = Array.from({ length: 16 }, async (_, i): Promise<InstanceResult> => {
      const allocator = await h.allocator(name);
      const { issued, failures } = await driveAllocator(allocator, { numbers: perInstance, random: seededRandom(i + 1) });
      const report = await allocator.close();
      return { label: `instance ${i}`, issued, failures, report, stats: allocator.stats() };
    });
    const results = await Promise.all([...inProcess, ...processes]);

    for (const r of results) expect(r.failures.filter((code) => code !== 'ConcurrencyExhausted')).toEqual([]);
    const hwm = await h.highWaterMark(name);
    // Returned tails are no gaps: they sit at or above the final high-water mark, or were handed
    // out again to an instance still running.
    expect(accountFor(results, start, hwm)).toEqual({
      total: 18 * perInstance,
      duplicates: 0,
      notIncreasing: [],
      unexplained: [],
      aboveHighWaterMark: 0,
    });
    // The contention was real.
    expect(results.reduce((sum, r) => sum + r.stats.retries412, 0)).toBeGreaterThan(0);
  });
});
