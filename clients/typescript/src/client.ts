/**
 * The entry point: one `TallyhoClient` per app, holding the transport (base URL, keys or credential,
 * retries, clock) and handing out the primitives. Sequences, gates and streams are per name; a
 * `Sequence` keeps its reserved block, so ask for it once and keep it (`client.sequence(name)`
 * returns the same object for the same name).
 */
import { Gates, Streams } from './admin.js';
import { Callers } from './callers.js';
import type { TokenCredential } from './auth.js';
import { type CounterOptions, Counters } from './counters.js';
import { Gate, type GateOptions } from './gate.js';
import { Jobs } from './jobs.js';
import type { OperationOptions } from './options.js';
import { Schedules } from './schedules.js';
import { CachedGateReleases, type IsReleasedOptions, type ReleaseCacheOptions } from './releases.js';
import { Sequence, type SequenceOptions } from './sequence.js';
import { Sequences } from './sequences.js';
import { Stream, type StreamOptions } from './stream.js';
import { Transport, type TransportOptions } from './transport.js';

export interface TallyhoClientOptions extends TransportOptions {
  /** How increments are coalesced (linger, requests in flight per counter). */
  readonly counters?: CounterOptions;
  /** How `isReleased` caches gate states and reports fallbacks. */
  readonly releases?: ReleaseCacheOptions;
}

/** The options beside a base URL and a credential (`new TallyhoClient(url, credential, options)`). */
export type TallyhoClientCredentialOptions = Omit<TallyhoClientOptions, 'baseUrl' | 'credential'>;

export class TallyhoClient {
  readonly transport: Transport;
  readonly counters: Counters;
  readonly jobs: Jobs;
  readonly schedules: Schedules;
  readonly sequences: Sequences;
  readonly gates: Gates;
  readonly streams: Streams;
  /** Named callers' credentials (admin), and `me`. */
  readonly callers: Callers;
  /** Cached gate checks for production code paths; type your code against `GateReleases`. */
  readonly releases: CachedGateReleases;
  private readonly sequenceCache = new Map<string, Sequence>();

  /**
   * A client that identifies with a credential, as Azure SDK clients are made: a token credential
   * (`new DefaultAzureCredential()` from `@azure/identity`, with `{ audience }`) or a Tallyho
   * credential (`tly1.…`).
   */
  constructor(baseUrl: string, credential: TokenCredential | string, options?: TallyhoClientCredentialOptions);
  // Last, so ConstructorParameters<typeof TallyhoClient> names the options.
  /** A client with the options given: keys, a credential, or both. */
  constructor(options: TallyhoClientOptions);
  constructor(first: TallyhoClientOptions | string, credential?: TokenCredential | string, rest: TallyhoClientCredentialOptions = {}) {
    const options: TallyhoClientOptions =
      typeof first === 'string' ? { ...rest, baseUrl: first, ...(credential === undefined ? {} : { credential }) } : first;
    this.transport = new Transport(options);
    this.counters = new Counters(this.transport, options.counters);
    this.jobs = new Jobs(this.transport);
    this.schedules = new Schedules(this.transport);
    this.sequences = new Sequences(this.transport);
    this.gates = new Gates(this.transport);
    this.streams = new Streams(this.transport);
    this.callers = new Callers(this.transport);
    this.releases = new CachedGateReleases(this.transport, options.releases);
  }

  /** The number source of one sequence; the same object for the same name (its options apply once). */
  sequence(name: string, options?: SequenceOptions): Sequence {
    let sequence = this.sequenceCache.get(name);
    if (sequence === undefined) {
      sequence = new Sequence(this.transport, name, options);
      this.sequenceCache.set(name, sequence);
    }
    return sequence;
  }

  gate(name: string, options?: GateOptions): Gate {
    return new Gate(this.transport, name, options);
  }

  /** A writer of one event type; keep it to keep its producer id and seqs. */
  stream(type: string, options?: StreamOptions): Stream {
    return new Stream(this.transport, type, options);
  }

  /** Whether the gate is released, from the cache; the default when that cannot be learned (`client.releases`). */
  isReleased(gate: string, options: IsReleasedOptions): Promise<boolean> {
    return this.releases.isReleased(gate, options);
  }

  /** `increment(key)`: shorthand for `client.counters.increment`. */
  increment(name: string, by = 1, options: OperationOptions = {}): Promise<void> {
    return this.counters.increment(name, by, options);
  }

  /** Drains pending counter increments; call before the process ends. */
  async close(): Promise<void> {
    await this.counters.close();
  }
}
