/**
 * An envelope: the unit of work on a queue, up to 32 items (or ~48 KB) of one job, each inline or as
 * a claim check (a byte range of the job's input blob with its SHA-256). It names its job, round,
 * processor and the job's item count, so a worker needs no job read to process it, and the trace its
 * submission started, so its processing joins that trace. This is the form the app works with; its
 * wire form (short keys: every byte counts four-thirds once the host's base64 is applied) is
 * ./wire.ts's alone.
 */
import type * as z from 'zod';

/** Any JSON value. */
export type JsonValue = z.output<ReturnType<typeof z.json>>;
export type JsonObject = Record<string, JsonValue>;

/** Where a large item lies in its job's input blob. */
export interface ClaimCheck {
  /** `<container>/<blob>` */
  readonly blob: string;
  /** Byte offset of the item's line in the blob. */
  readonly offset: number;
  /** Length of the line in bytes (no newline). */
  readonly length: number;
  /** SHA-256 of those bytes, hex. */
  readonly sha256: string;
}

interface ItemCommon {
  readonly id: string;
  /**
   * The item's attempt on this envelope's first delivery. On a declared processor's queue each later
   * delivery of the same message is one more (the attempt is `attempt + dequeueCount - 1`); items
   * moved to a new message (a split lease, a batch put back after an endpoint's 429) take the attempt
   * they are at, and their new message starts counting deliveries from 1.
   */
  readonly attempt: number;
}

export type EnvelopeItem = (ItemCommon & { readonly data: JsonObject }) | (ItemCommon & { readonly claimCheck: ClaimCheck });

export interface Envelope {
  readonly jobId: string;
  /** Diagnostics and error rows name it. */
  readonly envelopeId: string;
  readonly processor: string;
  /** 0 for the submission, k for the k-th retry-failed. */
  readonly round: number;
  /** Items in the whole job: the job is done when this many have a final result. */
  readonly jobItems: number;
  /** The submission's traceparent. */
  readonly trace?: string;
  readonly items: readonly EnvelopeItem[];
}

/** What every envelope of a job's round shares (packing makes the envelopes of a header and its items). */
export type EnvelopeHeader = Omit<Envelope, 'envelopeId' | 'items'>;

export function isClaimCheck(item: EnvelopeItem): item is ItemCommon & { readonly claimCheck: ClaimCheck } {
  return 'claimCheck' in item;
}

export function base64Length(bytes: number): number {
  return 4 * Math.ceil(bytes / 3);
}
