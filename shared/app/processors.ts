/**
 * The in-app processors: one registry, built here where the app is composed. Each registration is
 * what the route list shows (`info`: name, one line, an example — no I/O, no app) and how the
 * processor is built from the app's config and ports. To add a processor: its folder under shared/
 * with an index.ts front door (docs/write-a-processor.md walks through shared/wordcount/), one entry
 * below, its settings group (if any) in ./settings.ts. Nothing else in the app names it.
 */
import { billingInfo, billingOwnStreams, createBilling } from '../billing';
import type { DurableClient } from '../durable';
import { registry, type JobProcessor, type ProcessorInfo, type ProcessorRegistry } from '../jobs';
import type { StreamsApi } from '../streams';
import { createWordcount, wordcountInfo } from '../wordcount';
import type { AppConfig } from './settings';

/** What a processor may use of the app besides its config. */
export interface ProcessorPorts {
  /** The streams API on the Durable client of the invocation a processor's hand-on runs in. */
  readonly streams: (durable: DurableClient) => StreamsApi;
}

interface Registration {
  readonly info: ProcessorInfo;
  build(config: AppConfig, ports: ProcessorPorts): JobProcessor;
  /** Streams only this processor appends to: callers are refused on them. */
  ownStreams?(config: AppConfig): string[];
}

const registrations: readonly Registration[] = [
  {
    info: billingInfo,
    build: (config, ports) =>
      createBilling({ settings: config.billing, streams: ports.streams, maxBatchEvents: config.streams.maxBatchEvents }),
    ownStreams: (config) => billingOwnStreams(config.billing),
  },
  { info: wordcountInfo, build: () => createWordcount() },
];

/** The registered processors, for the route list and the OpenAPI document. */
export const processorInfos: readonly ProcessorInfo[] = registrations.map((r) => r.info);

export function inAppProcessors(config: AppConfig, ports: ProcessorPorts): ProcessorRegistry {
  return registry(...registrations.map((r) => r.build(config, ports)));
}

/** Every stream an in-app processor keeps for itself. */
export function processorOwnStreams(config: AppConfig): Set<string> {
  return new Set(registrations.flatMap((r) => r.ownStreams?.(config) ?? []));
}
