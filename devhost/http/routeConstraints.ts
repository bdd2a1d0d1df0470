/**
 * The inline route constraints ASP.NET Core offers (and so the Functions host): parsing follows
 * .NET's invariant-culture `TryParse` rules closely enough for URLs (leading/trailing white space
 * allowed, a leading sign for numbers, thousands separators for decimal/double/float).
 */
export interface Constraint {
  readonly name: string;
  test(value: string): boolean;
}

const int32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n };
const int64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

function parseInteger(value: string, range: { min: bigint; max: bigint }): bigint | undefined {
  const m = /^\s*([+-]?\d+)\s*$/.exec(value);
  if (m === null) return undefined;
  const n = BigInt(m[1] as string);
  return n < range.min || n > range.max ? undefined : n;
}

const decimalPattern = /^\s*[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?\s*$/;
const floatPattern = /^\s*[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;
const floatWords = /^\s*(?:[+-]?(?:infinity|∞)|nan)\s*$/i;

function isDecimal(value: string): boolean {
  return decimalPattern.test(value) && /\d/.test(value);
}

/** .NET Core 3+ parses an overflowing double/float as ±Infinity rather than failing, so no range check. */
function isFloat(value: string): boolean {
  return floatWords.test(value) || floatPattern.test(value);
}

const guidPatterns = [
  /^[0-9a-f]{32}$/i,
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  /^\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$/i,
  /^\([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)$/i,
];

function isDateTime(value: string): boolean {
  const text = value.trim();
  // Dates a URL carries: ISO 8601 (date, date-time, with zone) and the common US/RFC forms Date parses.
  if (!/\d/.test(text)) return false;
  return !Number.isNaN(Date.parse(text));
}

function numberArgs(name: string, args: string | undefined, count: number[], fail: (reason: string) => Error): bigint[] {
  const parts = args === undefined ? [] : args.split(',').map((a) => a.trim());
  if (!count.includes(parts.length) || parts.some((p) => !/^[+-]?\d+$/.test(p))) {
    throw fail(`constraint ${name} needs ${count.join(' or ')} integer argument(s)`);
  }
  return parts.map((p) => BigInt(p));
}

function noArgs(name: string, args: string | undefined, fail: (reason: string) => Error): void {
  if (args !== undefined) throw fail(`constraint ${name} takes no arguments`);
}

/** Builds a constraint from its name and raw argument text; unknown names fail like ASP.NET does. */
export function parseConstraint(name: string, args: string | undefined, fail: (reason: string) => Error): Constraint {
  const lower = name.toLowerCase();
  const make = (test: (value: string) => boolean): Constraint => ({ name: lower, test });
  switch (lower) {
    case 'int':
      noArgs(name, args, fail);
      return make((v) => parseInteger(v, int32) !== undefined);
    case 'long':
      noArgs(name, args, fail);
      return make((v) => parseInteger(v, int64) !== undefined);
    case 'bool':
      noArgs(name, args, fail);
      return make((v) => /^\s*(true|false)\s*$/i.test(v));
    case 'guid':
      noArgs(name, args, fail);
      return make((v) => guidPatterns.some((p) => p.test(v.trim())));
    case 'alpha':
      noArgs(name, args, fail);
      return make((v) => /^[a-z]*$/i.test(v));
    case 'datetime':
      noArgs(name, args, fail);
      return make(isDateTime);
    case 'decimal':
      noArgs(name, args, fail);
      return make(isDecimal);
    case 'double':
      noArgs(name, args, fail);
      return make(isFloat);
    case 'float':
      noArgs(name, args, fail);
      return make(isFloat);
    case 'min': {
      const [min] = numberArgs(name, args, [1], fail) as [bigint];
      return make((v) => {
        const n = parseInteger(v, int64);
        return n !== undefined && n >= min;
      });
    }
    case 'max': {
      const [max] = numberArgs(name, args, [1], fail) as [bigint];
      return make((v) => {
        const n = parseInteger(v, int64);
        return n !== undefined && n <= max;
      });
    }
    case 'range': {
      const [min, max] = numberArgs(name, args, [2], fail) as [bigint, bigint];
      if (min > max) throw fail(`constraint range(${args}) has min above max`);
      return make((v) => {
        const n = parseInteger(v, int64);
        return n !== undefined && n >= min && n <= max;
      });
    }
    case 'length': {
      const bounds = numberArgs(name, args, [1, 2], fail).map(Number);
      const [min, max] = bounds.length === 1 ? [bounds[0] as number, bounds[0] as number] : (bounds as [number, number]);
      return make((v) => v.length >= min && v.length <= max);
    }
    case 'minlength': {
      const [min] = numberArgs(name, args, [1], fail).map(Number) as [number];
      return make((v) => v.length >= min);
    }
    case 'maxlength': {
      const [max] = numberArgs(name, args, [1], fail).map(Number) as [number];
      return make((v) => v.length <= max);
    }
    case 'regex': {
      if (args === undefined || args === '') throw fail('constraint regex needs a pattern');
      let pattern: RegExp;
      try {
        // ASP.NET compiles route regexes case-insensitive and culture-invariant; they are not anchored.
        pattern = new RegExp(args, 'i');
      } catch (err) {
        throw fail(`constraint regex(${args}) is not a valid regular expression: ${err instanceof Error ? err.message : String(err)}`);
      }
      return make((v) => pattern.test(v));
    }
    case 'required':
      noArgs(name, args, fail);
      return make((v) => v !== '');
    default:
      throw fail(`unknown constraint "${name}"`);
  }
}
