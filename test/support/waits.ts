/**
 * Waits on conditions, never on the clock: a wait ends when what it waits for has happened (a log
 * line, a port, a state, a count reached) or when what it waits on has failed (the process exited),
 * and has no time budget of its own. A machine twice as busy makes a test slower, not red.
 *
 * The one limit is jest's timeout, a safety net with a generous margin (jest.config.js). When it
 * fires, jest names only the test; so every wait registers what it waits for, and the hooks that
 * test/support/projects/waits.setup.ts installs give up the waits still open when a test or a file
 * ends: each prints what it waited for with a report (the host's last output, the orchestrations
 * still running) and rejects, so nothing keeps polling into the next test.
 */
import { setTimeout as sleep } from 'node:timers/promises';

interface Pending {
  readonly what: string;
  readonly report: (() => Promise<string> | string) | undefined;
  readonly abandon: (error: AbandonedWait) => void;
}

const pending = new Set<Pending>();

/** Thrown into a wait that was given up (its test or file ended first). */
export class AbandonedWait extends Error {
  constructor(what: string, why: string, report: string) {
    super([`gave up waiting for ${what}: ${why}`, report].filter((part) => part !== '').join('\n'));
    this.name = 'AbandonedWait';
  }
}

async function reportOf(wait: Pending): Promise<string> {
  if (wait.report === undefined) return '';
  try {
    return await wait.report();
  } catch (err) {
    return `(no report: ${err instanceof Error ? err.message : String(err)})`;
  }
}

/**
 * Registers the wait for what `start` returns; `report` says what was seen so far, for when it is
 * given up. Resolves or rejects as that promise does, or, given up first, aborts `start`'s signal
 * (so it can stop what it started) and rejects with AbandonedWait.
 */
export function waitingFor<T>(
  what: string,
  start: (signal: AbortSignal) => Promise<T>,
  report?: () => Promise<string> | string,
): Promise<T> {
  const controller = new AbortController();
  let entry: Pending | undefined;
  const abandoned = new Promise<never>((_, reject) => {
    entry = {
      what,
      report,
      abandon: (error) => {
        reject(error);
        controller.abort(error);
      },
    };
    pending.add(entry);
  });
  const forget = (): void => {
    if (entry !== undefined) pending.delete(entry);
  };
  return Promise.race([start(controller.signal), abandoned]).finally(forget);
}

export interface UntilOptions {
  /** Pause between probes (default 100 ms). */
  readonly everyMs?: number;
  /** What was seen so far, printed when the wait is given up. */
  readonly report?: () => Promise<string> | string;
}

/** Probes until `probe` returns something other than undefined, and returns it. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, options: UntilOptions = {}): Promise<T> {
  const state: { given?: AbandonedWait } = {};
  const pause = new AbortController();
  const entry: Pending = {
    what,
    report: options.report,
    abandon: (error) => {
      state.given = error;
      pause.abort();
    },
  };
  const stopIfGiven = (): void => {
    if (state.given !== undefined) throw state.given;
  };
  pending.add(entry);
  try {
    for (;;) {
      stopIfGiven();
      const value = await probe();
      if (value !== undefined) return value;
      stopIfGiven();
      await sleep(options.everyMs ?? 100, undefined, { signal: pause.signal }).catch(() => undefined);
    }
  } finally {
    pending.delete(entry);
  }
}

/** The waits still open, by what they wait for. */
export function openWaits(): string[] {
  return [...pending].map((wait) => wait.what);
}

/**
 * Gives up every open wait: prints each with its report and rejects it with AbandonedWait. Returns
 * what was given up. The set-up hooks call it when a test or a file ends; a test of the reports calls
 * it too.
 */
export async function abandonWaits(why: string, print = true): Promise<AbandonedWait[]> {
  const open = [...pending];
  pending.clear();
  const errors = await Promise.all(
    open.map(async (wait) => {
      const error = new AbandonedWait(wait.what, why, await reportOf(wait));
      wait.abandon(error);
      return error;
    }),
  );
  if (print) for (const error of errors) console.error(error.message);
  return errors;
}
