/**
 * Shared benchmark reporting. Every benchmark prints its result as a ratio to a baseline measured in
 * the same process (machines are noisy), plus absolute figures with the machine noted.
 */
import { cpus, totalmem } from 'node:os';

import * as hdr from 'hdr-histogram-js';

export function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}/${process.arch}`;
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Latency recorder in microseconds (1 µs to 1 h, 3 significant digits). */
export class Latency {
  private readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });

  recordMs(ms: number): void {
    this.histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  /** Milliseconds at the given percentile (0-100). */
  percentileMs(p: number): number {
    return this.histogram.getValueAtPercentile(p) / 1000;
  }

  get count(): number {
    return this.histogram.totalCount;
  }

  get maxMs(): number {
    return this.histogram.maxValue / 1000;
  }

  summary(): { p50: number; p99: number; p999: number; max: number } {
    return { p50: this.percentileMs(50), p99: this.percentileMs(99), p999: this.percentileMs(99.9), max: this.maxMs };
  }
}

export function fmt(n: number, digits = 2): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return n.toFixed(digits);
}

export interface Row {
  readonly [column: string]: string | number;
}

export function table(title: string, rows: readonly Row[]): void {
  console.log(`\n${title}`);
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0] ?? {});
  const cells = rows.map((row) => columns.map((c) => (typeof row[c] === 'number' ? fmt(row[c]) : String(row[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: readonly string[]): string => `| ${values.map((v, i) => v.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(line(columns));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of cells) console.log(line(r));
}

/** Prints `name: ratio× (value vs baseline)` and whether it met its target. */
export function ratio(name: string, value: number, baseline: number, target?: { atLeast?: number; atMost?: number }): number {
  const r = value / baseline;
  let verdict = '';
  if (target?.atLeast !== undefined)
    verdict = r >= target.atLeast ? ` [target ≥ ${target.atLeast}×: met]` : ` [target ≥ ${target.atLeast}×: NOT met]`;
  if (target?.atMost !== undefined)
    verdict = r <= target.atMost ? ` [target ≤ ${target.atMost}×: met]` : ` [target ≤ ${target.atMost}×: NOT met]`;
  console.log(`RATIO ${name}: ${fmt(r)}× (${fmt(value)} vs baseline ${fmt(baseline)})${verdict}`);
  return r;
}

export function header(name: string): void {
  console.log(`\n=== bench/${name} — ${new Date().toISOString()} — ${machine()} ===`);
}

/** The value below which `p` (0-1) of the values lie, interpolated between the two nearest. */
function quantile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const below = sorted[Math.floor(at)] ?? NaN;
  const above = sorted[Math.ceil(at)] ?? NaN;
  return below + (above - below) * (at - Math.floor(at));
}

/**
 * A 95% confidence interval of the median of `values`: the order statistics the binomial distribution
 * of "how many fall below the median" puts around it (normal approximation; distribution-free, so
 * it holds for ratios whatever their spread's shape).
 */
function medianInterval(values: readonly number[]): readonly [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const half = (1.96 * Math.sqrt(n)) / 2;
  const lower = Math.max(1, Math.ceil(n / 2 - half));
  const upper = Math.min(n, Math.floor(n / 2 + 1 + half));
  return [sorted[lower - 1] ?? NaN, sorted[upper - 1] ?? NaN];
}

/**
 * Prints the median of per-window ratios (value / baseline of windows run back to back) and their
 * interquartile range: for a comparison within a few percent, where load from elsewhere on the
 * machine drifts over a run and would swamp a ratio of totals. The range says how far one pair
 * strays; the median of many pairs is what the target is checked against, and its 95% confidence
 * interval says whether the pairs resolve the target at all. The ratio of the means
 * is printed too: it weighs in what happens in few windows (a collection, a GC), which the median
 * leaves out.
 */
export function pairedRatio(
  name: string,
  pairs: readonly { readonly value: number; readonly baseline: number }[],
  target?: { atLeast?: number; atMost?: number },
): number {
  const ratios = pairs.map((p) => p.value / p.baseline);
  const r = quantile(ratios, 0.5);
  const [low, high] = medianInterval(ratios);
  const mean = (f: (p: { value: number; baseline: number }) => number): number => pairs.reduce((n, p) => n + f(p), 0) / pairs.length;
  const [value, baseline] = [mean((p) => p.value), mean((p) => p.baseline)];
  let verdict = '';
  if (target?.atLeast !== undefined) verdict = ` [target ≥ ${target.atLeast}×: ${r >= target.atLeast ? 'met' : 'NOT met'}]`;
  if (target?.atMost !== undefined) verdict = ` [target ≤ ${target.atMost}×: ${r <= target.atMost ? 'met' : 'NOT met'}]`;
  console.log(
    `RATIO ${name}: ${fmt(r)}× (median of ${pairs.length} paired windows, 95% interval ${fmt(low)}–${fmt(high)}×, ` +
      `interquartile range ${fmt(quantile(ratios, 0.25))}–${fmt(quantile(ratios, 0.75))}×; ` +
      `mean ${fmt(value)} vs baseline ${fmt(baseline)}, ${fmt(value / baseline)}×)${verdict}`,
  );
  return r;
}
