/**
 * Binding expressions in binding properties (`path`, `queueName`): `{rand-guid}`, `{DateTime}`
 * (UTC as `yyyy-MM-ddTHH-mm-ssZ`, the host's format), `{sys.randGuid}`, `{sys.utcNow}`, and
 * trigger data by name (case-insensitive; dotted names reach into objects): route parameters and
 * `Query.<name>` for HTTP, `QueueTrigger`, `Id`, `DequeueCount` … and the top-level properties of a
 * JSON message or body. A name with no value fails the invocation, as on the real host.
 */
import { randomUUID } from 'node:crypto';
import { DevhostError } from '../errors';

export type BindingData = Readonly<Record<string, unknown>>;

function hostDateTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
}

function lookup(data: BindingData, path: string): unknown {
  let node: unknown = data;
  for (const part of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    const record = node as Record<string, unknown>;
    const key = Object.keys(record).find((k) => k.toLowerCase() === part.toLowerCase());
    node = key === undefined ? undefined : record[key];
  }
  return node;
}

export function resolveBindingExpressions(text: string, data: BindingData, now: number, where: string): string {
  return text.replace(/\{([^{}]+)\}/g, (_whole, rawName: string) => {
    const name = rawName.trim();
    const lower = name.toLowerCase();
    if (lower === 'rand-guid' || lower === 'sys.randguid') return randomUUID();
    if (lower === 'datetime') return hostDateTime(now);
    if (lower === 'sys.utcnow') return new Date(now).toISOString();
    const value = lookup(data, name);
    if (value === undefined || value === null)
      throw new DevhostError('BindingExpressionInvalid', `${where}: no value for named parameter '${name}'`);
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** Adds the top-level properties of a JSON object to binding data (trigger values win). */
export function withJsonProperties(data: Record<string, unknown>, payload: unknown): Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return data;
  const out: Record<string, unknown> = { ...(payload as Record<string, unknown>) };
  for (const [k, v] of Object.entries(data)) out[k] = v;
  return out;
}
