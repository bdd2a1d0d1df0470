/**
 * ASP.NET Core route templates, as the Functions host matches them: literal and parameter segments,
 * `{id}`, `{id?}`, `{id=default}`, `{*rest}` / `{**rest}` catch-alls, complex segments such as
 * `{name}.{ext}`, inline constraints (`{id:int}`, `{n:range(1,9)}`, `{s:regex(^a+$)}`) and `{{`/`}}`
 * escapes. Literals match case-insensitively; values are percent-decoded per segment.
 */
import { type Constraint, parseConstraint } from './routeConstraints';
import { DevhostError } from '../errors';

export interface RouteParameter {
  readonly name: string;
  readonly optional: boolean;
  readonly catchAll: boolean;
  readonly defaultValue: string | undefined;
  readonly constraints: readonly Constraint[];
}

type Part = { readonly kind: 'literal'; readonly text: string } | { readonly kind: 'parameter'; readonly parameter: RouteParameter };

interface Segment {
  readonly parts: readonly Part[];
}

export interface RouteMatch {
  readonly params: Record<string, string>;
}

function templateError(template: string, reason: string): DevhostError {
  return new DevhostError('RouteTemplateInvalid', `Invalid route template "${template}": ${reason}`);
}

/**
 * Splits a template into parameter and literal runs. Outside a parameter `{{`/`}}` are literal
 * braces; inside one they are escaped braces (e.g. a regex quantifier) and a single `}` closes it.
 */
function tokenize(template: string, text: string): { literal: boolean; text: string }[] {
  const tokens: { literal: boolean; text: string }[] = [];
  let current = '';
  let inParameter = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    const doubled = text[i + 1] === ch && (ch === '{' || ch === '}');
    if (doubled) {
      current += ch;
      i++;
    } else if (ch === '{' && !inParameter) {
      if (current !== '') tokens.push({ literal: true, text: current });
      current = '';
      inParameter = true;
    } else if (ch === '}' && inParameter) {
      tokens.push({ literal: false, text: current });
      current = '';
      inParameter = false;
    } else if (ch === '{' || ch === '}') {
      throw templateError(template, `unexpected "${ch}"`);
    } else {
      current += ch;
    }
  }
  if (inParameter) throw templateError(template, 'unclosed "{"');
  if (current !== '') tokens.push({ literal: true, text: current });
  return tokens;
}

/** Splits on `/`, but not inside a parameter (a regex constraint may contain one). */
function splitSegments(text: string): string[] {
  const segments: string[] = [];
  let current = '';
  let inParameter = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if ((ch === '{' || ch === '}') && text[i + 1] === ch) {
      current += ch + ch;
      i++;
      continue;
    }
    if (ch === '{') inParameter = true;
    else if (ch === '}') inParameter = false;
    if (ch === '/' && !inParameter) {
      segments.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  segments.push(current);
  return segments;
}

function parseParameter(template: string, body: string): RouteParameter {
  let text = body;
  let catchAll = false;
  if (text.startsWith('**')) {
    catchAll = true;
    text = text.slice(2);
  } else if (text.startsWith('*')) {
    catchAll = true;
    text = text.slice(1);
  }
  // name[:constraint[(args)]]...[?|=default]; constraint arguments may contain ':' '?' '='.
  let i = 0;
  while (i < text.length && !':?='.includes(text[i] as string)) i++;
  const name = text.slice(0, i).trim();
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw templateError(template, `bad parameter name "${name}"`);
  const constraints: Constraint[] = [];
  let optional = false;
  let defaultValue: string | undefined;
  while (i < text.length) {
    const ch = text[i];
    if (ch === ':') {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_]/.test(text[j] as string)) j++;
      const constraintName = text.slice(i + 1, j);
      let args: string | undefined;
      if (text[j] === '(') {
        // Arguments run to the matching ')' (a regex may nest parentheses).
        let depth = 0;
        let k = j;
        for (; k < text.length; k++) {
          if (text[k] === '\\') {
            k++;
            continue;
          }
          if (text[k] === '(') depth++;
          else if (text[k] === ')' && --depth === 0) break;
        }
        if (k >= text.length) throw templateError(template, `unclosed "(" in constraint ${constraintName}`);
        args = text.slice(j + 1, k);
        j = k + 1;
      }
      constraints.push(parseConstraint(constraintName, args, (reason) => templateError(template, reason)));
      i = j;
    } else if (ch === '?' && i === text.length - 1) {
      optional = true;
      i++;
    } else if (ch === '=') {
      defaultValue = text.slice(i + 1);
      i = text.length;
    } else {
      throw templateError(template, `unexpected "${ch}" in parameter {${body}}`);
    }
  }
  if (catchAll && optional) throw templateError(template, 'a catch-all parameter cannot be marked optional');
  if (optional && defaultValue !== undefined) throw templateError(template, 'an optional parameter cannot have a default value');
  return { name, optional: optional || defaultValue !== undefined || catchAll, catchAll, defaultValue, constraints };
}

function parseSegment(template: string, text: string): Segment {
  const parts: Part[] = tokenize(template, text).map((t) =>
    t.literal ? { kind: 'literal', text: t.text } : { kind: 'parameter', parameter: parseParameter(template, t.text) },
  );
  for (let i = 1; i < parts.length; i++) {
    if (parts[i]?.kind === 'parameter' && parts[i - 1]?.kind === 'parameter') {
      throw templateError(template, 'two parameters must be separated by a literal');
    }
  }
  return { parts };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A percent-decoded path segment. A run of escapes that is not valid UTF-8 is left as it came (`%FF`
 * reaches the function as `%FF`, as Kestrel leaves it) rather than failing the match, so the app
 * answers it with its own 4xx as on the real host, not the host's empty 404.
 */
function decodeSegment(raw: string): string {
  return raw.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

export class RouteTemplate {
  readonly segments: readonly Segment[];
  readonly parameters: readonly RouteParameter[];
  /** One digit per segment, lower sorts first (literal 1, complex 2, constrained 3, plain 4, catch-all 5). */
  readonly precedence: string;
  /** Regexes for complex segments (several parts), built once. */
  private readonly complex: (RegExp | undefined)[];

  constructor(readonly template: string) {
    const trimmed = template.replace(/^~?\/+/, '').replace(/\/+$/, '');
    this.segments = trimmed === '' ? [] : splitSegments(trimmed).map((s) => parseSegment(template, s));
    const parameters: RouteParameter[] = [];
    this.segments.forEach((segment, index) => {
      if (segment.parts.length === 0) throw templateError(template, 'empty segment');
      for (const part of segment.parts) {
        if (part.kind !== 'parameter') continue;
        const p = part.parameter;
        if (parameters.some((q) => q.name.toLowerCase() === p.name.toLowerCase())) {
          throw templateError(template, `parameter "${p.name}" appears twice`);
        }
        if (p.catchAll && (index !== this.segments.length - 1 || segment.parts.length > 1)) {
          throw templateError(template, 'a catch-all parameter must be the whole last segment');
        }
        parameters.push(p);
      }
    });
    // Optional parameters may only end the template (a run of them, one per trailing segment).
    let seenOptional = false;
    for (const segment of this.segments) {
      const optionalHere = segment.parts.length === 1 && segment.parts[0]?.kind === 'parameter' && segment.parts[0].parameter.optional;
      const lastPart = segment.parts[segment.parts.length - 1];
      const optionalTail = lastPart?.kind === 'parameter' && lastPart.parameter.optional && !optionalHere;
      if (seenOptional && !optionalHere) throw templateError(template, 'an optional parameter must be at the end of the template');
      if (optionalHere) seenOptional = true;
      if (optionalTail && segment !== this.segments[this.segments.length - 1]) {
        throw templateError(template, 'an optional parameter in a complex segment must end the template');
      }
    }
    this.parameters = parameters;
    this.precedence = this.segments
      .map((s) => {
        const only = s.parts[0];
        if (s.parts.length > 1) return '2';
        if (only?.kind === 'literal') return '1';
        if (only?.kind === 'parameter' && only.parameter.catchAll) return '5';
        return only?.kind === 'parameter' && only.parameter.constraints.length > 0 ? '3' : '4';
      })
      .join('');
    this.complex = this.segments.map((s) => (s.parts.length > 1 ? this.complexRegex(s) : undefined));
  }

  private complexRegex(segment: Segment): RegExp {
    const last = segment.parts.length - 1;
    const body = segment.parts
      .map((part, i) => {
        if (part.kind === 'literal') return escapeRegex(part.text);
        const group = `(${part.parameter.optional && i === last ? '.*' : '.+'})`;
        return group;
      })
      .join('');
    return new RegExp(`^${body}$`, 'i');
  }

  /** Matches a path below the route prefix (no leading slash needed); query strings must be removed. */
  match(path: string): RouteMatch | undefined {
    const trimmed = path.replace(/^\/+/, '').replace(/\/+$/, '');
    const raw = trimmed === '' ? [] : trimmed.split('/');
    const params: Record<string, string> = {};
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments[i] as Segment;
      const first = segment.parts[0] as Part;
      if (first.kind === 'parameter' && first.parameter.catchAll) {
        const value = raw.slice(i).map(decodeSegment).join('/');
        if (value === '') {
          if (first.parameter.defaultValue !== undefined) params[first.parameter.name] = first.parameter.defaultValue;
          return this.checkConstraints(params);
        }
        params[first.parameter.name] = value;
        return this.checkConstraints(params);
      }
      const rawSegment = raw[i];
      if (rawSegment === undefined || rawSegment === '') {
        // Out of path: the rest of the template must be optional (or the optional tail of a complex segment).
        if (segment.parts.length === 1 && first.kind === 'parameter' && first.parameter.optional) {
          if (first.parameter.defaultValue !== undefined) params[first.parameter.name] = first.parameter.defaultValue;
          continue;
        }
        return undefined;
      }
      const value = decodeSegment(rawSegment);
      if (segment.parts.length === 1) {
        if (first.kind === 'literal') {
          if (first.text.toLowerCase() !== value.toLowerCase()) return undefined;
        } else {
          params[first.parameter.name] = value;
        }
        continue;
      }
      const m = this.complex[i]?.exec(value);
      if (m === null || m === undefined) return undefined;
      let group = 1;
      for (const part of segment.parts) {
        if (part.kind !== 'parameter') continue;
        const captured = m[group++] ?? '';
        if (captured !== '') params[part.parameter.name] = captured;
        else if (part.parameter.defaultValue !== undefined) params[part.parameter.name] = part.parameter.defaultValue;
      }
    }
    if (raw.length > this.segments.length) return undefined;
    return this.checkConstraints(params);
  }

  private checkConstraints(params: Record<string, string>): RouteMatch | undefined {
    for (const p of this.parameters) {
      const value = params[p.name];
      if (value === undefined) continue;
      if (!p.constraints.every((c) => c.test(value))) return undefined;
    }
    return { params };
  }
}

/** Orders templates so the most specific wins, as ASP.NET's inbound precedence does. */
export function compareTemplates(a: RouteTemplate, b: RouteTemplate): number {
  const n = Math.max(a.precedence.length, b.precedence.length);
  for (let i = 0; i < n; i++) {
    const x = a.precedence[i];
    const y = b.precedence[i];
    if (x === y) continue;
    // A template that ran out of segments is less specific than one that still has literals.
    if (x === undefined) return 1;
    if (y === undefined) return -1;
    return x < y ? -1 : 1;
  }
  return a.template.toLowerCase() < b.template.toLowerCase() ? -1 : a.template.toLowerCase() > b.template.toLowerCase() ? 1 : 0;
}
