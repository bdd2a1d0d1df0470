/**
 * The namespace map (docgen/namespace.ts) held against the code: docs/security.md carries the
 * generated map, and a property test feeds adversarial names to every route that creates something —
 * through the route's own validation, and for streams through the service's own reserved-name check —
 * and proves that a name let through never reaches one of the app's own ids: each id it makes
 * satisfies its store's Azure rule, is not in the app's own form (or, inside one, stays one part of
 * it), and never equals an id the app uses for itself, after normalisation.
 */
import { processorNamePattern } from '../../shared/jobs/processors/processorDefinition';
import fc from 'fast-check';

import {
  defaultNamespaceContext,
  namespaceBlock,
  namespaceMap,
  namespaceMarkdown,
  type NamespaceEntry,
  ownIds,
} from '../../docgen/namespace';
import { appRoutes } from '../../shared/app/routes';
import { registrationSettings } from '../../shared/app/settings';
import { readSettings } from '../../shared/config';
import type { RouteName } from '../../shared/http/authorization';
import type { RouteDefinition } from '../../shared/http/route';
import { azureNameRules, callerNamePattern, normalisedName } from '../../shared/names';
import { StreamService } from '../../shared/streams/service';
import { streamSettings } from '../../shared/streams/settings';
import { docBlockCells, tableCells } from '../support/generatedBlocks';
import { routeRequest, type TestRequest } from '../support/routeRequest';

const ctx = defaultNamespaceContext();
const map = namespaceMap(ctx);
const appOwn = ownIds(ctx).map((own) => ({ store: own.store, id: normalisedName(own.id) }));

/** Thrown when a validated request reaches a service: the route let the name through. */
class Reached extends Error {}

interface Call {
  readonly path: string;
  readonly args: readonly unknown[];
}

/** Any object of the app: records every call, and rejects with `Reached` when awaited. */
function recorder(calls: Call[], path: string): unknown {
  return new Proxy((): void => undefined, {
    get(_target, prop) {
      if (prop === 'then') return (_resolve: unknown, reject: (err: Error) => void) => reject(new Reached(path));
      return recorder(calls, `${path}.${String(prop)}`);
    },
    apply(_target, _this, args: unknown[]) {
      calls.push({ path, args });
      return recorder(calls, `${path}()`);
    },
  });
}

const calls: Call[] = [];

/** The real streams service (its own reserved-name check), on a context that records what it reaches. */
function streamsService(): StreamService {
  const settings = readSettings({ streams: streamSettings }, {}).streams;
  const context = recorder(calls, 'streams.context') as Record<string, unknown>;
  return new StreamService(
    new Proxy(context, {
      get: (target, prop) => {
        if (prop === 'settings') return settings;
        if (prop === 'ownTypes') return new Set(ctx.ownStreamTypes);
        if (prop === 'clock') return { now: () => 0 };
        return Reflect.get(target, prop) as unknown;
      },
    }) as unknown as ConstructorParameters<typeof StreamService>[0],
  );
}

const app = new Proxy(recorder(calls, 'app') as Record<string, unknown>, {
  get: (_target, prop) => (prop === 'streams' ? { service: streamsService() } : recorder(calls, `app.${String(prop)}`)),
});
const routes = appRoutes(() => app as never, registrationSettings({}));
const byName = new Map(routes.map((r) => [r.name, r]));

const at = '2099-01-01T00:00:00Z';
const queueTarget = { type: 'queueMessage', queue: 'app-x', message: 1 };
const item = {
  id: 'tx-1',
  customerId: 'c-42',
  amountMinor: 1999,
  currency: 'EUR',
  taxCategory: 'standard',
  occurredAt: '2026-03-01T12:00:00Z',
};

/** Every route that creates something, with where a caller's name goes in its request. */
const creating: Partial<Record<RouteName, (name: string) => TestRequest>> = {
  sequencesConfigure: (name) => ({ params: { name }, body: {} }),
  sequencesNext: (name) => ({ params: { name }, body: { count: 1 } }),
  countersConfigure: (name) => ({ params: { name }, body: {} }),
  countersIncrement: (name) => ({ params: { name } }),
  gatesCreate: (name) => ({ params: { name }, body: {} }),
  gatesStartRun: (runId) => ({ params: { name: 'launch' }, body: { runId } }),
  schedulesCreate: (id) => ({ body: { id, at, target: queueTarget } }),
  schedulesCreatePrivileged: (id) => ({ body: { id, at, target: queueTarget } }),
  jobsSubmit: (key) => ({ headers: { 'idempotency-key': key }, body: { processor: 'billing', items: [item] } }),
  streamsAppend: (type) => ({ params: { type }, body: { producer: 'p', seq: 1 } }),
  streamsRemap: (type) => ({ params: { type }, body: { partition: 'p01' } }),
  processorsDeclare: (name) => ({ params: { name }, body: { type: 'external' } }),
  callersIssue: (name) => ({ body: { name, roles: ['submitter'] } }),
};

/** POST and PUT routes that make nothing a name reaches (they act on what exists). */
const creatingNothing: readonly RouteName[] = [
  'gatesRelease',
  'gatesReset',
  'schedulesPause',
  'schedulesResume',
  'schedulesTrigger',
  'jobsRetryFailed',
  'streamsFlush',
  // A lease's id and a rotated secret are the app's; leases act on a declared processor's queue.
  'processorsRotateSecret',
  'leasesTake',
  'leasesExtend',
  'leasesComplete',
];

const silent = { log: () => undefined };

async function send(route: RouteDefinition, request: TestRequest): Promise<{ status: number; calls: Call[] }> {
  calls.length = 0;
  const res = await route.run(routeRequest(route, request), { logger: silent, durable: () => recorder(calls, 'durable') as never });
  return { status: res.status, calls: [...calls] };
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

/** What is wrong with the ids `entry` makes of a name the route let through (empty: nothing). */
function problems(entry: NamespaceEntry, name: string): string[] {
  const ids = entry.of?.(name) ?? [];
  const found: string[] = [];
  for (const id of ids) {
    const rule = entry.rule === undefined ? undefined : azureNameRules[entry.rule];
    if (rule !== undefined && !rule.pattern.test(id)) found.push(`${id} breaks the ${rule.store} rule`);
    if (entry.space === 'caller' && entry.appForm?.(id) === true) found.push(`${id} is in the app's own form`);
    if (appOwn.some((own) => own.store === entry.store && own.id === normalisedName(id))) found.push(`${id} is one of the app's own ids`);
  }
  // A path's segments, whole: the log prefix of one of the app's own streams.
  const path = entry.separator === '/' ? `${ids.join('/')}/` : undefined;
  if (path !== undefined && appOwn.some((own) => own.store === entry.store && own.id === normalisedName(path))) {
    found.push(`${path} is one of the app's own paths`);
  }
  if (entry.space === 'app' && entry.separator !== undefined && name.includes(entry.separator)) {
    found.push(`the name carries the separator "${entry.separator}" of ${entry.form}`);
  }
  return found;
}

// ---- adversarial names --------------------------------------------------------------------------

/** Names the app itself uses, whole or as the start of its forms. */
const ownShapes = [
  ...ctx.ownStreamTypes,
  ...ownIds(ctx).map((own) => own.id),
  'streams-flusher-p00--billing-invoices',
  'streams:flusher:',
  'streams-flusher-',
  'gate:launch:release:1',
  'gate:launch:run:w1',
  'gate-run launch:w1',
  'gate-run:launch:w1',
  'schedule-run nightly#1',
  'nightly#1',
  '|autocreated',
  'm|orders',
  'count',
  'route',
  'types|hub',
  '~sum',
  '~~',
  'k-00000000',
  'open',
  'sequences:orders',
  'secrets',
  'signing-key',
  '@gate@launch',
  '@streamwriter@p00:orders',
  'gate-actions',
  'jobs-work-0',
];

const lookalikes: Readonly<Record<string, readonly string[]>> = {
  a: ['а', 'ａ'],
  e: ['е', 'ｅ'],
  i: ['і', 'ı', 'ｉ'],
  o: ['о', '０'],
  c: ['с'],
  p: ['р'],
  s: ['ѕ', 'ｓ'],
  '-': ['‐', '－', '−'],
  ':': ['꞉', '：', '∶'],
  '.': ['．', '。', '․'],
  '|': ['｜', 'ǀ'],
};

function withLookalikes(base: string, picks: readonly number[]): string {
  let i = 0;
  return [...base]
    .map((ch) => {
      const options = lookalikes[ch.toLowerCase()];
      const pick = picks[i++ % Math.max(1, picks.length)] ?? 0;
      return options === undefined || pick === 0 ? ch : (options[pick % options.length] ?? ch);
    })
    .join('');
}

const validName = fc.stringMatching(callerNamePattern);

const ownVariant = fc
  .record({
    base: fc.constantFrom(...ownShapes),
    upper: fc.array(fc.boolean(), { maxLength: 64 }),
    dots: fc.integer({ min: 0, max: 3 }),
    prefix: fc.oneof(fc.constant(''), fc.constantFrom(...ownShapes), fc.string({ maxLength: 8 })),
    suffix: fc.oneof(fc.constant(''), fc.constantFrom('.', '..', ' ', '\u200b', ':', '|', '/', '#1', '-0'), fc.string({ maxLength: 8 })),
    lookalike: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 8 }),
    normalForm: fc.constantFrom('NFC', 'NFD', 'NFKD'),
  })
  .map(({ base, upper, dots, prefix, suffix, lookalike, normalForm }) => {
    const cased = [...base].map((ch, i) => (upper[i] === true ? ch.toUpperCase() : ch)).join('');
    return `${prefix}${withLookalikes(cased, lookalike)}${'.'.repeat(dots)}${suffix}`.normalize(normalForm);
  });

const anyText = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

const adversarialName = fc.oneof(
  { weight: 3, arbitrary: validName },
  { weight: 4, arbitrary: ownVariant },
  { weight: 2, arbitrary: anyText },
);

// ---- tests --------------------------------------------------------------------------------------

describe('the namespace map', () => {
  test('docs/security.md carries the generated map (npm run security:sync)', () => {
    expect(docBlockCells('security.md', namespaceBlock)).toEqual(tableCells(namespaceMarkdown(ctx)));
  });

  test('every POST and PUT route is either in the map or declared as creating nothing; every route the map names creates', () => {
    const writes = routes.filter((r) => (r.method === 'POST' || r.method === 'PUT') && r.anyMethod !== true).map((r) => r.name);
    expect(writes.filter((name) => creating[name] === undefined && !creatingNothing.includes(name))).toEqual([]);
    const named = new Set(map.flatMap((e) => e.caller?.routes ?? []));
    expect([...named].filter((name) => creating[name] === undefined)).toEqual([]);
    // Each creating route has at least one id in the map.
    expect(Object.keys(creating).filter((name) => !named.has(name as RouteName))).toEqual([]);
  });

  test("the app's own ids are in the app's own forms", () => {
    for (const entry of map.filter((e) => e.space === 'app' && e.store === 'Durable instance id')) {
      expect({ form: entry.form, colon: entry.form.includes(':') }).toEqual({ form: entry.form, colon: true });
    }
  });

  /**
   * Processor names are lowercase words and hyphens only, so most adversarial names stop at the edge;
   * names of that shape (of every length) are mixed in so the accepted side is exercised too.
   */
  const candidates = (route: RouteName): fc.Arbitrary<string> =>
    route === 'processorsDeclare' ? fc.oneof(adversarialName, fc.stringMatching(processorNamePattern)) : adversarialName;

  describe.each(Object.keys(creating) as RouteName[])('adversarial names through %s', (name) => {
    const route = byName.get(name);
    const request = creating[name];
    const entries = map.filter((e) => e.caller?.routes.includes(name) === true && e.of !== undefined);

    test('a name the route lets through makes only ids in their own place; a name it refuses reaches nothing', async () => {
      if (route === undefined || request === undefined) throw new Error(`no route ${name}`);
      let letThrough = 0;
      await fc.assert(
        fc.asyncProperty(candidates(name), async (candidate) => {
          const { status, calls: reached } = await send(route, request(candidate));
          if (reached.length === 0) {
            // Refused at the edge (or by the service's own check): a 4xx, and nothing was touched.
            expect({ candidate, status: status >= 400 && status < 500 }).toEqual({ candidate, status: true });
            return;
          }
          letThrough++;
          // What reached the app is the name exactly as given: nothing normalised it into another.
          expect(reached.some((call) => strings(call.args).includes(candidate))).toBe(true);
          expect({ candidate, problems: entries.flatMap((e) => problems(e, candidate)) }).toEqual({ candidate, problems: [] });
        }),
        // A job key that reads like a writer key is a job key: stores are compared apart.
        { numRuns: 400, examples: [['p03:billing-invoices']] },
      );
      // The property was exercised on names the route accepts, not only on refusals.
      expect(letThrough).toBeGreaterThan(20);
    });
  });

  test('the reserved stream types are refused in every case and dot variant the edge lets through (403)', async () => {
    const route = byName.get('streamsAppend');
    if (route === undefined) throw new Error('no streamsAppend');
    for (const own of ctx.ownStreamTypes) {
      for (const variant of [own, own.toUpperCase(), own[0]?.toUpperCase() + own.slice(1)]) {
        expect({ variant, status: (await send(route, { params: { type: variant }, body: { producer: 'p', seq: 1 } })).status }).toEqual({
          variant,
          status: 403,
        });
      }
      expect((await send(route, { params: { type: `${own}.` }, body: { producer: 'p', seq: 1 } })).status).toBe(400);
    }
  });
});
