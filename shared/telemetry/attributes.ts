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
  filter(
    declared: Readonly<Record<string, SpanAttribute>>,
    values: Readonly<Record<string, string | number | undefined>> | undefined,
  ): Attributes {
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
