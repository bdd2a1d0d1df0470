import { firstLineAt, formatLine, splitBlocks, takeLines, utf8Length } from '../../../shared/streams/ndjson';

const decoder = new TextDecoder();

describe('NDJSON log lines', () => {
  const line = (i: number, data: unknown = 'x') =>
    formatLine({ type: 't', producer: 'p', seq: i, index: i, at: '2026-01-01T00:00:00.000Z', data });

  it('serialises an event the same way every time, one line each', () => {
    expect(line(1, { b: 1, a: 2 })).toBe(
      '{"type":"t","producer":"p","seq":1,"index":1,"at":"2026-01-01T00:00:00.000Z","data":{"b":1,"a":2}}\n',
    );
    expect(formatLine({ type: 't', producer: 'p', seq: 1, index: 1, at: 'a', data: undefined })).toContain('"data":null');
  });

  it('takes a prefix of whole lines', () => {
    const text = line(0) + line(1) + line(2);
    expect(takeLines(text, 2)).toEqual({ head: line(0) + line(1), rest: line(2) });
    expect(takeLines(text, 5)).toEqual({ head: text, rest: '' });
    expect(firstLineAt(line(7))).toBe(Date.UTC(2026, 0, 1));
    expect(firstLineAt('')).toBeNull();
  });

  it('cuts blocks at line ends within the byte limit, counting UTF-8 bytes', () => {
    const text = line(0, 'é'.repeat(20)) + line(1) + line(2) + line(3);
    const max = utf8Length(line(0, 'é'.repeat(20))) + utf8Length(line(1));
    const blocks = splitBlocks(text, max);
    expect(blocks.map((b) => decoder.decode(b))).toEqual([line(0, 'é'.repeat(20)) + line(1), line(2) + line(3)]);
    expect(blocks.every((b) => b.length <= max)).toBe(true);
    expect(
      splitBlocks(text, 10)
        .map((b) => decoder.decode(b))
        .join(''),
    ).toBe(text);
    expect(splitBlocks('', 100)).toEqual([]);
  });
});
