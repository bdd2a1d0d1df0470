/**
 * A fan-out's wait for room, in this process: `n` tasks started 128 at a time (as a release's
 * fan-out sends its actions, shared/gates/fanOut.ts), each a timer of 0–5 ms standing in for a send,
 * the loop waiting for one to end with `Promise.race` over the tasks under way (the baseline: what
 * the fan-out did) and with `InFlight.next()` (shared/inFlight.ts: what it does). The figure is the
 * process's CPU for the whole fan-out; the timers are the same for both, so the difference is the
 * wait's own bookkeeping. Pairs run back to back, the order alternating, and the median of their
 * ratios is printed (bench/support/report.ts `pairedRatio`).
 *
 *   INFLIGHT_BENCH_SIZES=1000,10000 (default)  INFLIGHT_BENCH_PAIRS=9 (default)
 */
import { InFlight } from '../shared/inFlight';
import { fmt, header, median, pairedRatio, type Row, table } from './support/report';

const sizes = (process.env.INFLIGHT_BENCH_SIZES ?? '1000,10000').split(',').map(Number);
const pairs = Number(process.env.INFLIGHT_BENCH_PAIRS ?? 9);
const concurrency = 128;

const send = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.random() * 5));

async function withRace(n: number): Promise<void> {
  const sending = new Set<Promise<void>>();
  for (let i = 0; i < n; i++) {
    while (sending.size >= concurrency) await Promise.race(sending);
    const task: Promise<void> = send().then(() => void sending.delete(task));
    sending.add(task);
  }
  await Promise.all(sending);
}

async function withInFlight(n: number): Promise<void> {
  const sending = new InFlight();
  for (let i = 0; i < n; i++) {
    while (sending.size >= concurrency) await sending.next();
    sending.add(send());
  }
  await sending.settled();
}

/** The process's CPU ms for one fan-out of `n`. */
async function cpuMs(fanOut: (n: number) => Promise<void>, n: number): Promise<number> {
  const before = process.cpuUsage();
  await fanOut(n);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

async function main(): Promise<void> {
  header('inflight');
  const rows: Row[] = [];
  // Warmed once each, so neither side pays the other's compilation.
  await cpuMs(withRace, 1000);
  await cpuMs(withInFlight, 1000);
  for (const n of sizes) {
    const measured: { value: number; baseline: number }[] = [];
    for (let i = 0; i < pairs; i++) {
      const first = i % 2 === 0 ? withRace : withInFlight;
      const a = await cpuMs(first, n);
      const b = await cpuMs(first === withRace ? withInFlight : withRace, n);
      measured.push(first === withRace ? { value: a, baseline: b } : { value: b, baseline: a });
    }
    pairedRatio(`CPU of ${fmt(n, 0)} sends 128 at a time, waiting with Promise.race vs InFlight`, measured);
    rows.push({
      sends: n,
      'Promise.race CPU ms (median)': median(measured.map((m) => m.value)),
      'InFlight CPU ms (median)': median(measured.map((m) => m.baseline)),
    });
  }
  table(`A fan-out's wait for room, ${pairs} pairs per size, in this process`, rows);
}

void main();
