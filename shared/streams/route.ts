/**
 * Where an event type goes: a partition (a storage shard of writers; a folder of the streams
 * container) and a resource (the log inside it). A type with no row in the routes table is hashed
 * onto one of TALLYHO_STREAMS_PARTITIONS partitions and gets a resource named after itself (one log
 * per event type). A row overrides that and can be changed at run time (remap), unlike a modulo.
 */
import { writerKey } from './names';

export interface StreamRoute {
  readonly type: string;
  readonly partition: string;
  readonly resource: string;
  /** 0 for the hashed default; every remap adds one. Writers refuse versions they do not own. */
  readonly version: number;
  readonly source: 'table' | 'default';
  /** The target before the last remap, so a repeated remap can re-drive an unfinished handoff. */
  readonly previous?: { readonly partition: string; readonly resource: string; readonly version: number };
}

/** FNV-1a (32-bit): stable across processes and releases, which `String.hashCode`-style tricks are not. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

function partitionName(n: number): string {
  return `p${String(n).padStart(2, '0')}`;
}

export function defaultRoute(type: string, partitions: number): StreamRoute {
  return { type, partition: partitionName(fnv1a(type) % partitions), resource: type, version: 0, source: 'default' };
}

export function routeWriterKey(route: StreamRoute): string {
  return writerKey({ partition: route.partition, resource: route.resource });
}
