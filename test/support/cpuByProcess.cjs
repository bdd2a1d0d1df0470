/**
 * Where a test run's CPU went, by kind of process (the real host's .NET process, its Node worker,
 * Azurite, jest's workers, .NET builds, the browser, the linters…): the run is CPU-bound on a 2-core
 * machine, so what to cut is whatever burns the most, and file times alone do not say which process
 * that was. The timing reporter samples every process on the machine (Linux `/proc`) while the run
 * lasts and prints the sums after it.
 *
 * Sampling, not tracing: a process counts from the first sample that sees it (all its CPU if it
 * started after the run did) to the last; what it spent between its last sample and its exit is lost,
 * at most one interval per process, so short-lived ones are undercounted. The figures are for
 * finding the big consumers, not for billing. CommonJS, as jest loads reporters without a transform.
 */
const { readdirSync, readFileSync } = require('node:fs');

/** Kinds of process by their command line, first match wins. */
const kinds = [
  ['real host (.NET)', /WebHost\.dll/],
  ['real host worker (Node)', /nodejsWorker\.js/],
  ['devhost', /devhost\/cli\.js/],
  ['azurite', /azurite/],
  ['.NET builds', /\bdotnet\b.*\b(build|pack|restore|publish|msbuild|test)\b|MSBuild\.dll|VBCSCompiler|csc\.dll|crossgen/i],
  ['bicep', /bicep/i],
  ['chromium', /chrom(e|ium)/],
  ['jest workers', /jest-worker|processChild\.js/],
  ['eslint', /eslint/],
  ['tsc', /\btsc\b|typescript\/bin/],
  ['prettier', /prettier/],
  ['knip / depcruise', /knip|depcruise|dependency-cruiser/],
  ['esbuild / build', /esbuild|scripts\/build|scripts\/test-artifacts/],
  ['jest main', /\bjest\b/],
  ['npm', /\bnpm\b|npm-cli/],
  ['other node', /\bnode\b/],
];

/** The kind of a process from its command line (NUL-separated as /proc gives it, or spaces). */
function kindOf(commandLine) {
  const text = commandLine.replace(/\0/g, ' ');
  for (const [kind, pattern] of kinds) if (pattern.test(text)) return kind;
  return 'other';
}

/** The ids of the machine's processes, from /proc; undefined where there is none (not Linux). */
function processIds() {
  try {
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
}

/**
 * Every process's CPU so far (user + system, in clock ticks), from /proc, with its command line only
 * when `known(pid)` says it was not seen before (a process keeps its kind: one read of it is enough).
 */
function readProc(known = () => false) {
  const out = [];
  const pids = processIds();
  if (pids === undefined) return undefined;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name (2nd field) may hold spaces and parentheses: count fields after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      const id = `${pid}:${fields[19]}`;
      out.push({ pid: id, ticks, commandLine: known(id) ? '' : readFileSync(`/proc/${pid}/cmdline`, 'utf8') });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

/**
 * An account of CPU by kind: `sample(processes)` with what `readProc` gives; the first sample is the
 * baseline (what those processes had spent before is not the run's), later ones add each process's
 * growth since it was last seen, all of it for a process first seen after the baseline. Only the
 * processes of the last sample are remembered: an exited one keeps what it was counted.
 */
function cpuAccount() {
  let seen = new Map();
  const byKind = new Map();
  let baseline = true;
  return {
    knows: (pid) => seen.has(pid),
    sample(processes) {
      const now = new Map();
      for (const p of processes) {
        const before = seen.get(p.pid);
        const grown = before === undefined ? (baseline ? 0 : p.ticks) : p.ticks - before.ticks;
        const kind = before?.kind ?? kindOf(p.commandLine);
        now.set(p.pid, { ticks: p.ticks, kind });
        if (grown > 0) byKind.set(kind, (byKind.get(kind) ?? 0) + grown);
      }
      seen = now;
      baseline = false;
    },
    /** Ticks by kind, largest first. */
    totals() {
      return [...byKind.entries()].sort((a, b) => b[1] - a[1]);
    },
  };
}

/** Clock ticks per second: 100 on every Linux the suite runs on (USER_HZ, fixed by the kernel's ABI). */
const ticksPerSecond = 100;

/**
 * Samples every `intervalMs` until `stop()`, which answers CPU seconds by kind (largest first), or
 * undefined where there is no /proc.
 */
function startCpuSampler(intervalMs = 1000) {
  const account = cpuAccount();
  const first = readProc();
  if (first === undefined) return { stop: () => undefined };
  account.sample(first);
  const timer = setInterval(() => account.sample(readProc(account.knows) ?? []), intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      account.sample(readProc(account.knows) ?? []);
      return account.totals().map(([kind, ticks]) => ({ kind, seconds: ticks / ticksPerSecond }));
    },
  };
}

module.exports = { cpuAccount, kindOf, processIds, startCpuSampler };
