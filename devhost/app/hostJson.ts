/**
 * host.json as the host applies it: `AzureFunctionsJobHost__path__to__key` settings override (or
 * add) values, matching keys case-insensitively like .NET configuration, then `%Setting%` expressions
 * are resolved in every string. An override keeps the type of the value it replaces
 * (a number stays a number), otherwise it is a string; the schema (hostConfig.ts) accepts either.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { resolveSettingExpressions, type Settings } from './settings';
import { DevhostError } from '../errors';

export type JsonObject = Record<string, unknown>;

const overridePrefix = 'azurefunctionsjobhost__';

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolveDeep(value: unknown, settings: Settings, path: string): unknown {
  if (typeof value === 'string') return resolveSettingExpressions(value, settings, `host.json ${path}`);
  if (Array.isArray(value)) return value.map((v, i) => resolveDeep(v, settings, `${path}[${i}]`));
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolveDeep(v, settings, path === '' ? k : `${path}.${k}`);
    return out;
  }
  return value;
}

function coerceLike(existing: unknown, raw: string): unknown {
  if (typeof existing === 'number' && raw.trim() !== '' && !Number.isNaN(Number(raw))) return Number(raw);
  if (typeof existing === 'boolean' && /^(true|false)$/i.test(raw.trim())) return raw.trim().toLowerCase() === 'true';
  return raw;
}

function applyOverride(root: JsonObject, path: readonly string[], raw: string): void {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const wanted = path[i] as string;
    const key = Object.keys(node).find((k) => k.toLowerCase() === wanted.toLowerCase()) ?? wanted;
    if (i === path.length - 1) {
      node[key] = coerceLike(node[key], raw);
      return;
    }
    const next = node[key];
    if (!isObject(next)) node[key] = {};
    node = node[key] as JsonObject;
  }
}

export function loadHostJson(appRoot: string, settings: Settings): JsonObject {
  const file = join(appRoot, 'host.json');
  let raw: unknown = {};
  if (existsSync(file)) {
    try {
      raw = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new DevhostError('SettingsInvalid', `${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!isObject(raw)) throw new DevhostError('SettingsInvalid', `${file} must hold a JSON object`);
  // Overrides replace values before expressions are resolved, as configuration layering does.
  const overrides = Object.entries(settings)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[0].toLowerCase().startsWith(overridePrefix))
    .sort(([a], [b]) => a.length - b.length);
  for (const [name, value] of overrides) {
    const path = name
      .slice(overridePrefix.length)
      .split('__')
      .filter((p) => p !== '');
    if (path.length > 0) applyOverride(raw, path, value);
  }
  return resolveDeep(raw, settings, '') as JsonObject;
}

/** Parses `[-][d.]hh:mm[:ss[.fffffff]]` as .NET's TimeSpan does (invariant culture). */
export function parseTimeSpanMs(text: string): number | undefined {
  const m = /^\s*(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?\s*$/.exec(text);
  if (m === null) return undefined;
  const [, sign, days, hours, minutes, seconds, fraction] = m;
  const h = Number(hours);
  const min = Number(minutes);
  const s = Number(seconds ?? '0');
  if (h > 23 || min > 59 || s > 59) return undefined;
  const ms = ((Number(days ?? '0') * 24 + h) * 60 + min) * 60_000 + s * 1000 + Number(`0.${fraction ?? '0'}`) * 1000;
  return sign === '-' ? -ms : ms;
}
