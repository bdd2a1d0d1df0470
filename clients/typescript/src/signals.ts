/** Small AbortSignal helpers that work the same on Node 20 and in browsers without `AbortSignal.any`. */
import { abortReason } from './clock.js';

export interface Linked {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  /** Detaches from the parent signals; call when done so long-lived parents do not collect listeners. */
  release(): void;
}

/** A signal that aborts when any parent aborts, or when `abort` is called. */
export function linkSignals(...parents: readonly (AbortSignal | undefined)[]): Linked {
  const controller = new AbortController();
  const detach: (() => void)[] = [];
  for (const parent of parents) {
    if (parent === undefined) continue;
    if (parent.aborted) {
      controller.abort(abortReason(parent));
      break;
    }
    const onAbort = (): void => controller.abort(abortReason(parent));
    parent.addEventListener('abort', onAbort, { once: true });
    detach.push(() => parent.removeEventListener('abort', onAbort));
  }
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    release: () => detach.splice(0).forEach((d) => d()),
  };
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortReason(signal);
}

/**
 * `work`, or the signal's reason as soon as it aborts; the work itself goes on (others may be
 * waiting on it too), only this caller stops waiting.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        // The work's own failure, passed on as it came.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        reject(err);
      },
    );
  });
}
