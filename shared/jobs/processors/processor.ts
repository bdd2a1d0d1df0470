/**
 * What an in-app job processor provides: `processItem` (the map step: one item in, an output or a
 * reasoned failure out, pure or idempotent because an item can run more than once) and `finalize`
 * (the reduce step, run once per completion by the single finalizer, over the outputs of every
 * succeeded item). Processors are named in `POST /api/jobs` (`processor`). The in-app ones are
 * registered where the app is composed (shared/app/processors.ts); external and webhook processors
 * are declared at run time (./processorStore.ts) and have no code here: their items leave the app.
 */
import type { DurableClient } from '../../durable/client';
import type { JsonObject, JsonValue } from '../envelopes/envelope';

export type ItemOutcome =
  | { readonly ok: true; readonly output: JsonValue }
  | {
      readonly ok: false;
      /** Short machine-readable cause, e.g. `invalid`. */
      readonly code: string;
      readonly reason: string;
      /** Retried (in a later, smaller envelope) until TALLYHO_JOBS_MAX_ATTEMPTS; false: final at once. */
      readonly retryable: boolean;
    };

interface ItemContext {
  readonly jobId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
}

interface SucceededOutput {
  readonly id: string;
  readonly output: JsonValue;
}

export interface FinalizeContext {
  readonly jobId: string;
  readonly round: number;
  /** Outputs of every succeeded item of the job (all rounds), each once. */
  outputs(): AsyncIterable<SucceededOutput>;
  /** Writes (or overwrites) a job file; returns its name for the summary (`GET /api/jobs/{id}/files/{name}`). */
  writeFile(name: string, contentType: string, body: string): Promise<string>;
}

interface DeliverContext {
  readonly jobId: string;
  readonly round: number;
  /** A file `finalize` wrote. */
  readFile(name: string): Promise<string | undefined>;
  /** The Durable client of the invocation the hand-on runs in (its own trigger declares the binding). */
  readonly durable: DurableClient;
}

export interface JobProcessor {
  readonly name: string;
  processItem(item: JsonObject, context: ItemContext): Promise<ItemOutcome>;
  /** Must be deterministic in its inputs: after a crash another instance runs it again. */
  finalize(context: FinalizeContext): Promise<JsonObject>;
  /**
   * Hands the completed job's output on (e.g. to a stream), after the job
   * completed and before its event. Retried until it returns, so it must be idempotent.
   */
  deliver?(context: DeliverContext): Promise<'delivered' | 'notConfigured'>;
}

export type ProcessorRegistry = ReadonlyMap<string, JobProcessor>;

/** What the route list and the OpenAPI document say of a registered processor (no I/O, no app). */
export interface ProcessorInfo {
  readonly name: string;
  /** One line: what goes in and what comes out. */
  readonly description: string;
  /** A submission for it, shown in the OpenAPI document (and validated against the schema by its tests). */
  readonly example?: { readonly processor: string; readonly items: readonly ({ readonly id: string } & Record<string, unknown>)[] };
}

export function registry(...processors: JobProcessor[]): ProcessorRegistry {
  return new Map(processors.map((p) => [p.name, p]));
}
