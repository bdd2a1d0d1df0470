/**
 * The guard every attribute value passes before it reaches a metric or a span: enumerated values
 * stay in their set, names stay few (a cap per attribute), and a caller's name appears only where the operator allowed
 * it (TALLYHO_TELEMETRY_CALLER_NAMES). A metric series exists per distinct attribute set, so an
 * unbounded value would make an unbounded bill, and a caller's name may be what they would not
 * want in an operator's dashboard.
 */
import type { Attributes } from '@opentelemetry/api';

import { matchesPattern } from '../namePatterns';
import type { SpanAttribute } from './declare';

/** What a value outside its set, or past a cap, is recorded as (the semantic conventions' spelling). */
const otherValue = '_OTHER';

export interface AttributePolicy {
  /** Caller-chosen names that may appear: exact names or `prefix*` (`*`: any). Empty: none. */
  readonly callerNames: readonly string[];
  /** Distinct names recorded per attribute before the rest become `_OTHER`. */
  readonly maxNames: number;
}

export const defaultAttributePolicy: AttributePolicy = { callerNames: [], maxNames: 100 };

/** What a record call passes, before the guard: any keys, each a string or a number. */
export type AnyValues = Readonly<Record<string, string | number | undefined>> | undefined;

const noAttributes: Attributes = Object.freeze({});

/**
 * Attribute sets one instrument remembers. The legitimate sets are few (names are capped, the rest
 * enumerated), so this is far above what the app records; values past it (names the policy drops,
 * say, in any number) are checked on every record instead, so the cache cannot grow without bound.
 */
export const maxCachedSets = 1024;

/** One step of the lookup: a declared key's value leads to the next key's, the last to the checked set. */
interface CacheNode {
  readonly next: Map<string | number | undefined, CacheNode>;
  attributes?: Attributes;
}

/** Remembers which names were let through, so the cap holds for the life of the process. */
class NameCap {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  admit(name: string): string {
    if (this.seen.has(name)) return name;
    if (this.seen.size >= this.max) return otherValue;
    this.seen.add(name);
    return name;
  }
}

export class AttributeGuard {
  /** Per attribute key: a series is per attribute set, so each name attribute is capped on its own. */
  private readonly caps = new Map<string, NameCap>();

  constructor(private readonly policy: AttributePolicy) {}

  /** The attributes to record: each declared key's value checked against its kind; undeclared keys dropped. */
  filter(declared: Readonly<Record<string, SpanAttribute>>, values: AnyValues): Attributes {
    const out: Attributes = {};
    if (values === undefined) return out;
    for (const key in values) {
      const value = values[key];
      const spec = declared[key];
      if (value === undefined || spec === undefined) continue;
      const kept = this.value(key, spec, value);
      if (kept !== undefined) out[key] = kept;
    }
    return out;
  }

  /**
   * `filter` for one declaration that remembers its answer per combination of values, so a hot path
   * pays a few map lookups instead of building and checking a new set on every record. The answer for
   * given values never changes once given: the policy is fixed, a name let through stays let through,
   * and a cap once full stays full. Cached sets are frozen: they are shared by every record.
   */
  cacheFor(declared: Readonly<Record<string, SpanAttribute>>): AttributeSetCache {
    return new AttributeSetCache(Object.keys(declared), (values) => this.filter(declared, values));
  }

  private value(key: string, spec: SpanAttribute, value: string | number): string | number | undefined {
    if (spec.kind === 'httpStatus') return Number.isInteger(value) && Number(value) >= 100 && Number(value) <= 599 ? value : otherValue;
    const text = String(value);
    switch (spec.kind) {
      case 'enum':
        return spec.values.includes(text) ? text : otherValue;
      case 'appId':
        return text;
      case 'operator':
        return this.cap(key).admit(text);
      case 'caller':
        return this.policy.callerNames.some((p) => matchesPattern(p, text)) ? this.cap(key).admit(text) : undefined;
    }
  }

  private cap(key: string): NameCap {
    let cap = this.caps.get(key);
    if (cap === undefined) {
      cap = new NameCap(this.policy.maxNames);
      this.caps.set(key, cap);
    }
    return cap;
  }
}

/** The checked attribute sets of one instrument, found by its declared keys' values in order. */
export class AttributeSetCache {
  private readonly root: CacheNode = { next: new Map() };
  private cached = 0;

  constructor(
    private readonly keys: readonly string[],
    private readonly check: (values: AnyValues) => Attributes,
  ) {}

  /** How many sets are remembered (at most maxCachedSets). */
  get size(): number {
    return this.cached;
  }

  get(values: AnyValues): Attributes {
    if (values === undefined) return noAttributes;
    let node = this.root;
    for (const key of this.keys) {
      const found = node.next.get(values[key]);
      if (found === undefined) return this.remember(values);
      node = found;
    }
    return node.attributes ?? this.remember(values);
  }

  private remember(values: NonNullable<AnyValues>): Attributes {
    const attributes = Object.freeze(this.check(values));
    if (this.cached >= maxCachedSets) return attributes;
    let node = this.root;
    for (const key of this.keys) {
      const value = values[key];
      let found = node.next.get(value);
      if (found === undefined) {
        found = { next: new Map() };
        node.next.set(value, found);
      }
      node = found;
    }
    node.attributes = attributes;
    this.cached++;
    return attributes;
  }
}
