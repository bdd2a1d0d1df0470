/**
 * A jest reporter that says where the run's time went: after the run, the slowest test files with
 * their project and time, and each project's total (the sum of its files' times; with two workers
 * the wall time is about half of the sum), and for the projects named in `perFile` (the real-host
 * ones, whose skips must be only the devhost-only features) each file's passed, failed and skipped
 * counts, how many hosts the harness started and on Linux what their processes
 * cost in CPU (hostStarts.cjs), the CPU seconds each kind of process spent (cpuByProcess.cjs), and what
 * the jest workers' share went to, by project (workerCpu.cjs). With TEST_TIMINGS_FILE set, every
 * file's time, with its tests' times, also goes to that file as JSON (for comparing two runs file by
 * file). CommonJS, as jest loads reporters without a transform.
 */
const { readFileSync, rmSync, writeFileSync } = require('node:fs');

const { startCpuSampler } = require('./cpuByProcess.cjs');
const { costliestHosts, hostStarts } = require('./hostStarts.cjs');
const { costsDirVariable, fileKey, repoPath } = require('./testCosts.cjs');
const { workerCpu, workerCpuLine } = require('./workerCpu.cjs');

/** The machine's CPU time so far, busy and all (Linux: /proc/stat's first line, in clock ticks), or undefined elsewhere. */
function cpuTimes() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const all = fields.reduce((a, b) => a + b, 0);
    // idle and iowait are the 4th and 5th fields.
    return { all, busy: all - (fields[3] ?? 0) - (fields[4] ?? 0) };
  } catch {
    return undefined;
  }
}

/** The kinds of process that spent a second or more, largest first (nothing without /proc). */
function cpuLine(cpuByKind) {
  const shown = (cpuByKind ?? []).filter((k) => k.seconds >= 1).map((k) => `${k.kind} ${k.seconds.toFixed(0)}`);
  return shown.length === 0
    ? ''
    : `CPU seconds by process kind (every process on the machine, sampled every second from jest's start): ${shown.join(', ')}\n`;
}

class TimingReporter {
  constructor(globalConfig, options = {}) {
    this.shown = options.slowest ?? 10;
    this.perFile = new Set(options.perFile ?? []);
    // Where the harness and the projects' set-up write what hosts and files cost (testCosts.cjs).
    this.costsDir = process.env[costsDirVariable];
    // Whether the run was bound by the CPU (more workers would not help) or by waiting (they might).
    this.cpuAtStart = cpuTimes();
    // And which processes it went to (cpuByProcess.cjs).
    this.cpuSampler = startCpuSampler();
  }

  onRunComplete(_contexts, results) {
    const cpuByKind = this.cpuSampler.stop();
    const starts = hostStarts(this.costsDir);
    const workers = workerCpu(this.costsDir);
    if (this.costsDir !== undefined) rmSync(this.costsDir, { recursive: true, force: true });
    const files = results.testResults
      .filter((r) => r.perfStats && r.perfStats.end > 0)
      .map((r) => ({
        seconds: (r.perfStats.end - r.perfStats.start) / 1000,
        // When the file ran, in seconds from the run's start: which files made the run's tail.
        startedAt: (r.perfStats.start - results.startTime) / 1000,
        project: r.displayName?.name ?? '',
        path: repoPath(r.testFilePath),
        // Each test's own time: how far below jest's timeout (the safety net) the slowest ones stay.
        tests: r.testResults.map((t) => ({ title: t.fullName, ms: t.duration ?? 0 })).sort((a, b) => b.ms - a.ms),
      }));
    // The hosts each file started in its project, what their processes cost in CPU seconds by kind
    // (Linux), and what the file cost its jest worker.
    for (const f of files) {
      const key = fileKey(f.project, f.path);
      f.hostStarts = starts.byFile.get(key) ?? {};
      f.hostCpu = starts.cpuByFile.get(key) ?? {};
      f.workerCpu = workers.byFile.get(key);
    }
    if (files.length === 0) return;
    const timingsFile = process.env.TEST_TIMINGS_FILE;
    const shared = starts.byFile.has('shared')
      ? [{ seconds: 0, project: '', path: 'shared hosts', tests: [], hostStarts: starts.byFile.get('shared') }]
      : [];
    const cpu = cpuByKind === undefined ? [] : [{ seconds: 0, project: '', path: 'CPU seconds by process kind', tests: [], cpuByKind }];
    if (timingsFile)
      writeFileSync(timingsFile, `${JSON.stringify([...[...files].sort((a, b) => b.seconds - a.seconds), ...shared, ...cpu], null, 1)}\n`);
    const totals = new Map();
    for (const f of files) totals.set(f.project, (totals.get(f.project) ?? 0) + f.seconds);
    const width = Math.max(...files.map((f) => f.project.length));
    const lines = [...files]
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, this.shown)
      .map((f) => `  ${f.seconds.toFixed(1).padStart(6)} s  ${f.project.padEnd(width)}  ${f.path}`);
    const perProject = [...totals.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([project, seconds]) => `${project} ${seconds.toFixed(0)} s`)
      .join(', ');
    const counted = results.testResults
      .filter((r) => this.perFile.has(r.displayName?.name ?? ''))
      .map((r) => {
        const skipped = r.numPendingTests + r.numTodoTests;
        const counts = `${r.numPassingTests} passed, ${r.numFailingTests} failed, ${skipped} skipped`;
        return `  ${(r.displayName?.name ?? '').padEnd(width)}  ${counts.padEnd(36)}  ${r.testFilePath.replace(`${process.cwd()}/`, '')}`;
      })
      .sort();
    if (counted.length > 0) process.stderr.write(`\nTests per file (${[...this.perFile].join(', ')}):\n${counted.join('\n')}\n`);
    const cpuNow = cpuTimes();
    const busy =
      this.cpuAtStart === undefined || cpuNow === undefined || cpuNow.all === this.cpuAtStart.all
        ? ''
        : `The machine's CPU was busy ${Math.round((100 * (cpuNow.busy - this.cpuAtStart.busy)) / (cpuNow.all - this.cpuAtStart.all))}% of the run (every process on it, not only the tests)\n`;
    process.stderr.write(
      `\nSlowest ${lines.length} test files:\n${lines.join('\n')}\nTime per project (sum of file times): ${perProject}\n` +
        (starts.total === undefined ? '' : `Host starts: ${starts.total}\n`) +
        (starts.cpu === undefined
          ? ''
          : `Host CPU seconds (each host's own processes; the shared hosts still run): ${starts.cpu}\n` +
            `Costliest hosts, by file (CPU seconds): ${costliestHosts(starts.cpuByFile, 5).join(', ')}\n`) +
        busy +
        cpuLine(cpuByKind) +
        workerCpuLine(workers.byProject),
    );
  }
}

module.exports = TimingReporter;
