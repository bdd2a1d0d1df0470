/**
 * Where a release's time went, read from the host's output: the releasing instance's fan-out
 * (`gates.fanout.done`, shared/gates/fanOut.ts) and each of the orchestration's action batches
 * (`gates.actions.batch`, actionRunner.ts) log one line with the epoch ms at which its steps ended.
 * Relative to the release call, that splits the wait into the orchestration's scheduling (to a batch's
 * start), making or finding the release (`confirmed`), reading the pending runs (`read`), the sends
 * (`sent` the first, `performed` the last) and recording the outcomes (`recorded`).
 */
interface BatchLine {
  readonly event: string;
  readonly gate: string;
  readonly done: number;
  readonly [step: string]: unknown;
}

const steps = ['started', 'confirmed', 'read', 'sent', 'performed', 'recorded'] as const;
const kinds = { 'gates.fanout.done': "the releasing instance's fan-out", 'gates.actions.batch': "the orchestration's batches" } as const;

function batchLines(output: string, gate: string): BatchLine[] {
  const lines: BatchLine[] = [];
  for (const m of output.matchAll(/\{"level":"info","event":"gates\.(?:actions\.batch|fanout\.done)"[^}]*\}/g)) {
    const line = JSON.parse(m[0]) as BatchLine;
    if (line.gate === gate) lines.push(line);
  }
  return lines;
}

/** When `lines` reached each step, ms after `t0`: first/median/last. */
function stepsOf(lines: readonly BatchLine[], t0: number): string {
  return steps
    .flatMap((step) => {
      const at = lines
        .map((l) => l[step])
        .filter((v): v is number => typeof v === 'number')
        .map((v) => v - t0)
        .sort((a, b) => a - b);
      if (at.length === 0) return [];
      return [`${step} ${at[0] ?? 0}/${at[Math.floor(at.length / 2)] ?? 0}/${at[at.length - 1] ?? 0}`];
    })
    .join(', ');
}

/**
 * Per kind of line (the fan-out, the orchestration's batches): how many, the actions they recorded,
 * and when they reached each step, ms after the release call (first/median/last); undefined when none logged.
 */
export function batchBreakdown(output: string, gate: string, t0: number): string | undefined {
  const lines = batchLines(output, gate);
  const failed = output
    .split('\n')
    .filter((l) => l.includes('"event":"gates.fanout.failed"') && l.includes(`"gate":${JSON.stringify(gate)}`))
    .map((l) => `fan-out failed: ${l.slice(l.indexOf('{'))}`);
  if (lines.length === 0 && failed.length === 0) return undefined;
  const kindsSeen = Object.entries(kinds).flatMap(([event, name]) => {
    const mine = lines.filter((l) => l.event === event);
    if (mine.length === 0) return [];
    const done = mine.reduce((sum, l) => sum + l.done, 0);
    return [
      `${name}: ${mine.length} line(s), ${done} actions recorded; ms after the release call (first/median/last): ${stepsOf(mine, t0)}`,
    ];
  });
  return [...failed, ...kindsSeen].join('\n    ');
}
