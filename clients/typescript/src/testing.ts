/**
 * Test doubles for apps that use the client (like LaunchDarkly's TestData): the same interface as
 * the real thing, with state the test sets in memory and no network. `TestGateReleases` answers as
 * `client.releases` does: a gate the test never set, or made unreachable, answers the caller's
 * `default` and is reported as a fallback.
 */
import { throwIfAborted } from './signals.js';
import type { GateReleases, IsReleasedOptions, ReleaseFallback } from './releases.js';

export class TestGateReleases implements GateReleases {
  private readonly states = new Map<string, boolean>();
  private readonly down = new Set<string>();
  /** Every answer that was the caller's default, in order (what `onFallback` would have been told). */
  readonly fallbacks: ReleaseFallback[] = [];

  /** Gate states to start from, e.g. `{ launch: true }`. */
  constructor(initial: Readonly<Record<string, boolean>> = {}) {
    for (const [gate, released] of Object.entries(initial)) this.states.set(gate, released);
  }

  set(gate: string, released: boolean): this {
    this.down.delete(gate);
    this.states.set(gate, released);
    return this;
  }

  release(gate: string): this {
    return this.set(gate, true);
  }

  close(gate: string): this {
    return this.set(gate, false);
  }

  /** From now on the gate cannot be read (until `set`/`release`/`close`): callers get their default. */
  unreachable(gate: string): this {
    this.states.delete(gate);
    this.down.add(gate);
    return this;
  }

  // async, so an abort rejects like the real one's instead of throwing synchronously.
  // eslint-disable-next-line @typescript-eslint/require-await
  async isReleased(gate: string, options: IsReleasedOptions): Promise<boolean> {
    throwIfAborted(options.abortSignal);
    const released = this.states.get(gate);
    if (released !== undefined) return released;
    const reason = this.down.has(gate) ? 'unreachable (TestGateReleases)' : 'never set (TestGateReleases)';
    this.fallbacks.push({ gate, answer: options.default, source: 'default', error: new Error(`gate ${gate}: ${reason}`) });
    return options.default;
  }
}
