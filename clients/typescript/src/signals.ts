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
