/** The Telemetry port: instruments built from declarations, the attribute guard, observables, spans across a hop. */
import { context as otelContext, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';

import { AppError } from '../../../shared/errors';
import {
  appId,
  callerName,
  counter,
  declareTelemetry,
  gauge,
  histogram,
  observableGauge,
  oneOf,
  operatorName,
  span,
} from '../../../shared/telemetry/declare';
import { staleAfterCollections } from '../../../shared/telemetry/instruments';
import { noTelemetry } from '../../../shared/telemetry/port';
import { declaredMetrics } from '../../../docgen/telemetryCatalog';
import { contextOf, traceparentOf } from '../../../shared/telemetry/traceContext';
import { memoryTelemetry } from '../../support/telemetry';

const declarations = declareTelemetry(
  'tallyho.test',
  {
    things: counter({
      name: 'tallyho.test.things',
      unit: '{thing}',
      description: 'Things.',
      attributes: { 'tallyho.outcome': oneOf('ok', 'bad'), 'tallyho.test.name': callerName('counter'), queue: operatorName },
    }),
    took: histogram({ name: 'tallyho.test.duration', unit: 's', description: 'Time.', boundaries: [0.1, 1] }),
    depth: observableGauge({
      name: 'tallyho.test.depth',
      unit: '{item}',
      description: 'Depth.',
      attributes: { 'tallyho.test.name': callerName('counter') },
    }),
    worst: observableGauge({
      name: 'tallyho.test.worst',
      unit: 's',
      description: 'Worst.',
      attributes: { 'tallyho.test.name': callerName('counter') },
      combine: 'max',
    }),
    pending: gauge({
      name: 'tallyho.test.pending',
      unit: '{hit}',
      description: 'Pending, per resource, summed.',
      attributes: { 'tallyho.test.name': callerName('counter') },
      combine: 'sum',
    }),
  },
  {
    work: span({
      name: 'tallyho.test.work',
      kind: 'consumer',
      description: 'Work.',
      attributes: { 'tallyho.test.id': appId, 'tallyho.test.name': callerName('counter') },
    }),
  },
);

describe('metrics', () => {
  it('records what was declared, and keeps enumerated values in their set', async () => {
    const memory = memoryTelemetry();
    const { metrics } = memory.telemetry.of(declarations);
    metrics.things.add(2, { 'tallyho.outcome': 'ok' });
    metrics.things.add(1, { 'tallyho.outcome': 'nonsense' as 'ok' });
    metrics.took.record(0.5);
    const collected = await memory.collect();
    expect(collected.total('tallyho.test.things', { 'tallyho.outcome': 'ok' })).toBe(2);
    expect(collected.total('tallyho.test.things', { 'tallyho.outcome': '_OTHER' })).toBe(1);
    expect(collected.total('tallyho.test.duration')).toBe(1);
    expect(collected.unit('tallyho.test.duration')).toBe('s');
  });

  it('leaves caller-chosen names out unless the policy allows them, and caps the names it lets through', async () => {
    const off = memoryTelemetry();
    off.telemetry.of(declarations).metrics.things.add(1, { 'tallyho.test.name': 'secret-project' });
    expect((await off.collect()).points('tallyho.test.things').map((p) => p.attributes)).toEqual([{}]);

    const on = memoryTelemetry({ callerNames: ['orders', 'app-*'], maxNames: 2 });
    const things = on.telemetry.of(declarations).metrics.things;
    for (const name of ['orders', 'app-1', 'app-2', 'other']) things.add(1, { 'tallyho.test.name': name });
    const names = (await on.collect()).points('tallyho.test.things').map((p) => p.attributes['tallyho.test.name']);
    // app-2 is past the cap of two names; `other` matches no pattern and is left out.
    expect(names.sort()).toEqual(['_OTHER', 'app-1', 'orders', undefined].sort());
  });

  it('caps operator names too', async () => {
    const memory = memoryTelemetry({ maxNames: 1 });
    const things = memory.telemetry.of(declarations).metrics.things;
    things.add(1, { queue: 'a' });
    things.add(1, { queue: 'b' });
    const collected = await memory.collect();
    expect(collected.total('tallyho.test.things', { queue: 'a' })).toBe(1);
    expect(collected.total('tallyho.test.things', { queue: '_OTHER' })).toBe(1);
  });

  it('combines what an observable reports for one attribute set: summed, or the largest', async () => {
    const memory = memoryTelemetry();
    const { metrics } = memory.telemetry.of(declarations);
    metrics.depth.observe((report) => {
      report(3, { 'tallyho.test.name': 'a' });
      report(4, { 'tallyho.test.name': 'b' });
    });
    metrics.worst.observe(async (report) => {
      await Promise.resolve();
      report(3, { 'tallyho.test.name': 'a' });
      report(9, { 'tallyho.test.name': 'b' });
      report(4, { 'tallyho.test.name': 'c' });
    });
    const collected = await memory.collect();
    expect(collected.points('tallyho.test.depth').map((p) => p.value)).toEqual([7]);
    expect(collected.points('tallyho.test.worst').map((p) => p.value)).toEqual([9]);
  });

  it('a gauge over caller-named resources exports the sum of each one’s latest reading, not the last one read', async () => {
    // Caller names left out (the default): the two counters share one series.
    const off = memoryTelemetry();
    const pending = off.telemetry.of(declarations).metrics.pending;
    pending.record(200, { 'tallyho.test.name': 'a' });
    pending.record(244, { 'tallyho.test.name': 'a' }); // a's newer reading replaces its older one
    pending.record(10, { 'tallyho.test.name': 'b' });
    expect((await off.collect()).points('tallyho.test.pending').map((p) => [p.attributes, p.value])).toEqual([[{}, 254]]);
    // Names exported: one series per counter, each its latest reading.
    const on = memoryTelemetry({ callerNames: ['*'] });
    const named = on.telemetry.of(declarations).metrics.pending;
    named.record(244, { 'tallyho.test.name': 'a' });
    named.record(10, { 'tallyho.test.name': 'b' });
    const points = (await on.collect()).points('tallyho.test.pending');
    expect(points.map((p) => [p.attributes['tallyho.test.name'], p.value]).sort()).toEqual([
      ['a', 244],
      ['b', 10],
    ]);
  });

  it('a resource not read again drops out of its gauge after staleAfterCollections collections', async () => {
    const memory = memoryTelemetry();
    const pending = memory.telemetry.of(declarations).metrics.pending;
    pending.record(5, { 'tallyho.test.name': 'gone' });
    const sums: number[] = [];
    for (let i = 0; i <= staleAfterCollections; i++) {
      sums.push(...(await memory.collect()).points('tallyho.test.pending').map((p) => p.value));
      if (i === 0) pending.record(7, { 'tallyho.test.name': 'kept' });
    }
    // `gone` counts in the staleAfterCollections collections after its reading, then drops out; `kept` stays.
    expect(sums).toEqual([5, ...Array<number>(staleAfterCollections - 1).fill(12), 7]);
  });

  it('every gauge over caller-named resources declares how its readings combine (sum or max)', () => {
    const offenders = declaredMetrics()
      .map(({ metric }) => metric)
      .filter((m) => m.kind === 'gauge' && Object.values(m.attributes).some((a) => a.kind === 'caller') && m.combine === undefined)
      .map((m) => m.name);
    expect(offenders).toEqual([]);
  });

  it('costs nothing without telemetry: instruments exist and do nothing, spans only run their work', async () => {
    const { metrics, spans } = noTelemetry.of(declarations);
    metrics.things.add(1);
    metrics.depth.observe(() => {
      throw new Error('never called');
    });
    await expect(spans.work.run({}, (s) => Promise.resolve(s.traceparent()))).resolves.toBeUndefined();
    // Made once per declarations, as with providers: a gate action asks for them per action.
    expect(noTelemetry.of(declarations)).toBe(noTelemetry.of(declarations));
  });
});

describe('spans', () => {
  it('continue a trace carried across a hop, linking the span that was active where they ran', async () => {
    const memory = memoryTelemetry();
    const { spans } = memory.telemetry.of(declarations);
    const carried = await spans.work.run({ attributes: { 'tallyho.test.id': 'job-1' } }, (s) => Promise.resolve(s.traceparent()));
    expect(carried).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const host = contextOf('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    await otelContext.with(host, () => spans.work.run({ parent: carried }, () => Promise.resolve(undefined)));
    const [first, second] = memory.spans();
    expect(second?.spanContext().traceId).toBe(first?.spanContext().traceId);
    expect(second?.parentSpanContext?.spanId).toBe(first?.spanContext().spanId);
    expect(second?.links.map((l) => l.context.traceId)).toEqual(['0af7651916cd43dd8448eb211c80319c']);
    expect(first?.attributes).toEqual({ 'tallyho.test.id': 'job-1' });
  });

  it('nest under the active span across awaits', async () => {
    const memory = memoryTelemetry();
    const { spans } = memory.telemetry.of(declarations);
    await spans.work.run({}, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await spans.work.run({}, () => Promise.resolve(undefined));
    });
    const [inner, outer] = memory.spans();
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
  });

  it('record a failure as error.type (the code), never the message', async () => {
    const memory = memoryTelemetry();
    const { spans } = memory.telemetry.of(declarations);
    await expect(spans.work.run({}, () => Promise.reject(new AppError('NotFound', 'No counter named "my-private-name"')))).rejects.toThrow(
      'my-private-name',
    );
    const [failed] = memory.spans();
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed?.status.message).toBeUndefined();
    expect(failed?.attributes).toEqual({ 'error.type': 'NotFound' });
    expect(failed?.events).toEqual([]);
  });

  it('never take a caller name the policy does not allow', async () => {
    const memory = memoryTelemetry();
    await memory.telemetry
      .of(declarations)
      .spans.work.run({ attributes: { 'tallyho.test.name': 'acme-secret' } }, () => Promise.resolve(undefined));
    expect(memory.spans()[0]?.attributes).toEqual({});
  });
});

describe('trace context', () => {
  it('reads back the traceparent it wrote and refuses malformed ones', () => {
    const text = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(traceparentOf(contextOf(text))).toBe(text);
    for (const bad of [
      '',
      'nonsense',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x',
    ]) {
      expect(contextOf(bad)).toBe(ROOT_CONTEXT);
    }
    expect(trace.getSpanContext(contextOf(undefined))).toBeUndefined();
  });
});
