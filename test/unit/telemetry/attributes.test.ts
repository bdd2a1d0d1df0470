/** The attribute guard's per-instrument cache: the same answers as checking every time, and bounded. */
import { AttributeGuard, maxCachedSets } from '../../../shared/telemetry/attributes';
import { callerName, oneOf, operatorName } from '../../../shared/telemetry/declare';

const declared = { 'tallyho.test.name': callerName('counter'), 'tallyho.outcome': oneOf('ok', 'bad'), queue: operatorName };

describe('the attribute set cache', () => {
  it('answers what the guard answers, for allowed, dropped, capped and out-of-set values alike', () => {
    const policy = { callerNames: ['app-*'], maxNames: 2 };
    const cache = new AttributeGuard(policy).cacheFor(declared);
    const checked = new AttributeGuard(policy);
    const calls = [
      { 'tallyho.test.name': 'app-1', 'tallyho.outcome': 'ok' },
      { 'tallyho.test.name': 'secret', 'tallyho.outcome': 'ok' },
      { 'tallyho.test.name': 'app-2', 'tallyho.outcome': 'nonsense' },
      { 'tallyho.test.name': 'app-3', 'tallyho.outcome': 'bad', queue: 'q' },
      { queue: 'r' },
      { queue: 'q', extra: 'not declared' },
      undefined,
    ];
    // Twice over: the second pass is answered from the cache and must not differ from the first.
    for (const values of [...calls, ...calls]) expect(cache.get(values)).toEqual(checked.filter(declared, values));
    // app-3 is past the cap of two names; the queue cap is its own, and `q` is its first name.
    expect(cache.get(calls[3])).toEqual({ 'tallyho.test.name': '_OTHER', 'tallyho.outcome': 'bad', queue: 'q' });
  });

  it('keeps a name past the cap out even when another instrument let names through first', () => {
    const guard = new AttributeGuard({ callerNames: ['*'], maxNames: 1 });
    const first = guard.cacheFor(declared);
    const second = guard.cacheFor(declared);
    expect(first.get({ 'tallyho.test.name': 'a' })).toEqual({ 'tallyho.test.name': 'a' });
    expect(second.get({ 'tallyho.test.name': 'b' })).toEqual({ 'tallyho.test.name': '_OTHER' });
    expect(second.get({ 'tallyho.test.name': 'a' })).toEqual({ 'tallyho.test.name': 'a' });
    expect(first.get({ 'tallyho.test.name': 'b' })).toEqual({ 'tallyho.test.name': '_OTHER' });
  });

  it('shares one frozen set per combination of values', () => {
    const cache = new AttributeGuard({ callerNames: ['*'], maxNames: 10 }).cacheFor(declared);
    const once = cache.get({ 'tallyho.test.name': 'a', 'tallyho.outcome': 'ok' });
    expect(cache.get({ 'tallyho.outcome': 'ok', 'tallyho.test.name': 'a' })).toBe(once);
    expect(Object.isFrozen(once)).toBe(true);
  });

  it('stops remembering at its bound and still answers right past it', () => {
    const cache = new AttributeGuard({ callerNames: ['allowed'], maxNames: 100 }).cacheFor(declared);
    for (let i = 0; i < maxCachedSets + 500; i++)
      expect(cache.get({ 'tallyho.test.name': `caller-${i}`, 'tallyho.outcome': 'ok' })).toEqual({ 'tallyho.outcome': 'ok' });
    expect(cache.size).toBe(maxCachedSets);
    expect(cache.get({ 'tallyho.test.name': 'allowed' })).toEqual({ 'tallyho.test.name': 'allowed' });
    expect(cache.size).toBe(maxCachedSets);
  });
});
