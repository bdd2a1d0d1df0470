// What the e2e harness's hosts cost the run, for the timing reporter (timingReporter.cjs). CommonJS,
// as jest loads reporters without a transform.
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const { fileKey, shownKey } = require('./testCosts.cjs');

/** The file in the run's costs folder (testCosts.cjs) that the harness writes a line to for each step. */
const hostStartsFile = 'host-starts.txt';

/**
 * One step's CPU (seconds) into its kind's account and its file's: the life it ended, and what the
 * life it started took to reach Running. NaN ('-', or nothing from an older harness: the CPU could not
 * be read) counts neither.
 */
function addCpu(cpu, cpuByFile, { kind, what, key, started, ended }) {
  const spent = cpu.get(kind) ?? { lives: 0, seconds: 0, starts: 0, starting: 0 };
  if (ended > 0) {
    spent.lives += 1;
    spent.seconds += ended;
    const ofFile = cpuByFile.get(key) ?? {};
    ofFile[kind] = (ofFile[kind] ?? 0) + ended;
    cpuByFile.set(key, ofFile);
  }
  if (what !== 'stop' && started > 0) {
    spent.starts += 1;
    spent.starting += started;
  }
  cpu.set(kind, spent);
}

/**
 * The host starts the test files counted (test/support/hostCosts.ts: the e2e harness's hosts and the
 * scale-out cluster's): by kind, with restarts apart, for the run and for each file of each project
 * (keyed as testCosts.cjs says; "shared" for the projects' shared hosts), with the seconds the starts,
 * restarts and stops took (a line is `kind what project path seconds startedCpu endedCpu`; stops are
 * timed, not counted), and on Linux what the hosts' own processes cost in CPU: in all (each life ended
 * during the run: by a stop, or replaced by a restart) and in reaching Running (each start and
 * restart), and each file's hosts in all (`cpuByFile`: kind → seconds). The shared hosts stop after the
 * report, so they are left out of it.
 */
function hostStarts(dir) {
  const file = dir === undefined ? undefined : join(dir, hostStartsFile);
  if (file === undefined || !existsSync(file)) return { total: undefined, byFile: new Map(), cpuByFile: new Map() };
  const counts = new Map();
  const seconds = new Map();
  const byFile = new Map();
  const cpu = new Map();
  const cpuByFile = new Map();
  for (const line of readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')) {
    const [kind, what, project, path, took, startedCpu, endedCpu] = line.split(' ');
    const key = path === 'shared' ? path : fileKey(project, path);
    const step = `${kind}${what === 'start' ? '' : ` ${what}s`}`;
    seconds.set(step, (seconds.get(step) ?? 0) + Number(took ?? 0));
    // The shared hosts' lives end after the report: their starts are left out with them.
    if (path !== 'shared') addCpu(cpu, cpuByFile, { kind, what, key, started: Number(startedCpu), ended: Number(endedCpu) });
    if (what === 'stop') continue;
    counts.set(step, (counts.get(step) ?? 0) + 1);
    const of = byFile.get(key) ?? {};
    of[step] = (of[step] ?? 0) + 1;
    byFile.set(key, of);
  }
  const stops = [...seconds.keys()].filter((key) => key.endsWith(' stops'));
  const total =
    counts.size === 0
      ? undefined
      : [...counts.entries()].map(([key, n]) => `${key} ${n} (${seconds.get(key).toFixed(0)} s)`).join(', ') +
        (stops.length === 0 ? '' : `; stopping took ${stops.map((key) => `${key} ${seconds.get(key).toFixed(0)} s`).join(', ')}`);
  const cpuShown = [...cpu.entries()]
    .filter(([, c]) => c.lives > 0 || c.starts > 0)
    .map(
      ([kind, c]) =>
        `${kind} ${c.seconds.toFixed(0)} s in ${c.lives} lives, ${c.starting.toFixed(0)} s of it reaching Running ` +
        `(${c.starts} starts and restarts, ${(c.starting / Math.max(1, c.starts)).toFixed(1)} s each)`,
    );
  const cpuTotal = cpuShown.length === 0 ? undefined : cpuShown.join('; ');
  return { total, byFile, cpu: cpuTotal, cpuByFile };
}

/** The files whose hosts cost the most CPU, as the report prints them: `path (project) real 57 devhost 16`. */
function costliestHosts(cpuByFile, shown) {
  const sum = (spent) => Object.values(spent).reduce((a, b) => a + b, 0);
  return [...cpuByFile.entries()]
    .sort((a, b) => sum(b[1]) - sum(a[1]))
    .slice(0, shown)
    .map(
      ([key, spent]) =>
        `${shownKey(key)} ${Object.entries(spent)
          .sort((a, b) => b[1] - a[1])
          .map(([kind, s]) => `${kind} ${s.toFixed(0)}`)
          .join(' ')}`,
    );
}

module.exports = { hostStarts, hostStartsFile, costliestHosts };
