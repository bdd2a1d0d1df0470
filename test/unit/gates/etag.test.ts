/** The gate ETag: every visible change moves it, equal views agree, If-None-Match is parsed per RFC 9110. */
import { gateEtag, ifNoneMatchHits } from '../../../shared/gates/etag';
import type { GateSnapshot } from '../../../shared/gates/operations';
import { snapshot } from './fixtures';

const base = snapshot();
const release = { generation: 1, at: '2026-01-01T00:01:00.000Z', by: 'a', how: 'api' as const };

describe('gateEtag', () => {
  test('is a strong, quoted tag naming generation and state, equal for equal views', () => {
    expect(gateEtag(base)).toMatch(/^"g1\.c\.[A-Za-z0-9_-]{16}"$/);
    expect(gateEtag({ ...base, waiters: { ...base.waiters } })).toBe(gateEtag(base));
  });

  test('changes with every field a reader can see', () => {
    const variants: GateSnapshot[] = [
      { ...base, generation: 2 },
      { ...base, state: 'released', release },
      { ...base, releaseAt: '2026-02-01T00:00:00.000Z' },
      { ...base, generationStartedAt: '2026-01-02T00:00:00.000Z' },
      { ...base, state: 'released', release: { ...release, by: 'b' } },
      { ...base, state: 'released', release: { ...release, note: 'n' } },
      { ...base, waiters: { ...base.waiters, waiting: 1 } },
      { ...base, waiters: { ...base.waiters, registered: 1 } },
      { ...base, waiters: { ...base.waiters, late: 1 } },
      { ...base, waiters: { ...base.waiters, proceeded: 1 } },
    ];
    const tags = new Set([gateEtag(base), ...variants.map(gateEtag)]);
    expect(tags.size).toBe(variants.length + 1);
  });
});

describe('ifNoneMatchHits', () => {
  const tag = gateEtag(base);
  test.each([
    [null, false],
    [tag, true],
    [`W/${tag}`, true],
    [`"other", ${tag}`, true],
    ['*', true],
    ['"other"', false],
    ['', false],
  ])('%s → %s', (header, expected) => {
    expect(ifNoneMatchHits(header, tag)).toBe(expected);
  });
});
