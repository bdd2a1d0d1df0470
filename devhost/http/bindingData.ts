/**
 * The HTTP trigger's binding data as the real host builds it, which stream mode hands the worker as
 * trigger metadata and `@azure/functions` turns into `request.params` (every string entry but
 * `Query` and `Headers`). The host (azure-webjobs-sdk-extensions,
 * HttpTriggerAttributeBindingProvider.GetRequestBindingData and Utility.ApplyBindingData) adds, in
 * this order, each later one replacing an earlier one of the same name:
 *   1. the top-level fields of a JSON object body that are neither objects nor arrays, as text
 *      (only when the request has a Content-Length above 0; `null` fields are left out);
 *   2. every query value except `code` (the key), repeated names joined with commas;
 *   3. the route values.
 * Its dictionary ignores case and keeps a name's first spelling: `?TYPE=x` on a route `{type}`
 * gives `TYPE` with the route's value. Observed on host 4.1037.0:
 * devhost/docs/real-host.md#binding-data.
 */

/** Newtonsoft's text of a JSON primitive (`(string)JToken`): booleans are `True`/`False`. */
function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** The body's contribution: a JSON object's top-level primitive fields; nothing for anything else. */
function bodyFields(body: Buffer | undefined): [string, string][] {
  if (body === undefined || body.length === 0) return [];
  const text = body.toString('utf8').trim();
  // Utility.IsJson: only text that starts with `{` and ends with `}` is read as an object.
  if (!text.startsWith('{') || !text.endsWith('}')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [];
  return Object.entries(parsed as Record<string, unknown>).flatMap(([key, value]) => {
    const textValue = primitiveText(value);
    return textValue === undefined ? [] : [[key, textValue] as [string, string]];
  });
}

export function httpTriggerParams(
  route: Readonly<Record<string, string>>,
  query: Readonly<Record<string, string>>,
  body: Buffer | undefined,
): Record<string, string> {
  const entries = new Map<string, [string, string]>();
  const put = (key: string, value: string): void => {
    const lower = key.toLowerCase();
    entries.set(lower, [entries.get(lower)?.[0] ?? key, value]);
  };
  for (const [key, value] of bodyFields(body)) put(key, value);
  for (const [key, value] of Object.entries(query)) if (key.toLowerCase() !== 'code') put(key, value);
  for (const [key, value] of Object.entries(route)) put(key, value);
  return Object.fromEntries(entries.values());
}
