// `npm run test:under-load`: the whole suite (`npm test`) beside a CPU hog that keeps every core busy
// — one Node busy loop per core, nothing to install — and a report of what failed. The suite waits on
// conditions, never on the machine's speed (test/support/waits.ts), so a busy machine must make it
// slower and nothing else; this is the check that it does.
//
//   npm run test:under-load                 npm test beside one busy loop per core
//   npm run test:under-load -- --hogs 4     four busy loops instead
//   npm run test:under-load -- --runs 3     three runs in a row (stops at the first failing one)
//   npm run test:under-load -- -- jest …    another command instead of npm test
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const { values: options, positionals } = parseArgs({
  options: { hogs: { type: 'string' }, runs: { type: 'string', default: '1' } },
  allowPositionals: true,
});
const hogs = options.hogs === undefined ? availableParallelism() : Number(options.hogs);
const runs = Number(options.runs);
const [command = 'npm', ...args] = positionals.length > 0 ? positionals : ['npm', 'test'];
if (!Number.isInteger(hogs) || hogs < 1 || !Number.isInteger(runs) || runs < 1) {
  console.error('test:under-load: --hogs and --runs take whole numbers from 1');
  process.exit(2);
}

// A busy loop in a worker thread: a core's worth of work that never yields, until it is terminated.
const busyLoop = 'let x = 0; for (;;) x = (x + 1) % 1_000_003;';
const workers = Array.from({ length: hogs }, () => new Worker(busyLoop, { eval: true }));
const stopHogs = () => Promise.all(workers.map((w) => w.terminate()));

console.log(
  `[under-load] ${hogs} busy loop(s) on ${availableParallelism()} core(s); running \`${[command, ...args].join(' ')}\` ${runs} time(s)`,
);

/** Runs the command with its output passed through; resolves with its exit code and the failing test files it printed. */
function runOnce() {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    const failed = new Set();
    let tail = '';
    const scan = (chunk, out) => {
      out.write(chunk);
      const text = tail + chunk.toString();
      const lines = text.split('\n');
      tail = lines.pop() ?? '';
      for (const line of lines) {
        // jest's summary line per failing file ("FAIL <project> <path>"), with or without run-p's label.
        const m = /FAIL\s+(?:\S+\s+)?(\S+\.test\.ts)/.exec(line);
        if (m !== null) failed.add(m[1]);
      }
    };
    child.stdout.on('data', (chunk) => scan(chunk, process.stdout));
    child.stderr.on('data', (chunk) => scan(chunk, process.stderr));
    child.on('close', (code) => resolve({ code, failed: [...failed] }));
  });
}

let exitCode = 0;
try {
  for (let run = 1; run <= runs; run++) {
    const started = Date.now();
    const { code, failed } = await runOnce();
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    if (code === 0) {
      console.log(`[under-load] run ${run}/${runs}: passed in ${minutes} min beside ${hogs} busy loop(s)`);
      continue;
    }
    console.log(`[under-load] run ${run}/${runs}: FAILED (exit ${code}) after ${minutes} min beside ${hogs} busy loop(s)`);
    for (const file of failed) console.log(`[under-load]   failed: ${file}`);
    exitCode = code ?? 1;
    break;
  }
} finally {
  await stopHogs();
}
process.exit(exitCode);
