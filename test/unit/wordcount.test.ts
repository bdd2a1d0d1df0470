import { wordcountProcessor } from '../../shared/wordcount/processor';

describe('the word-count processor (docs/write-a-processor.md)', () => {
  const processor = wordcountProcessor();

  it('counts words and characters of a text, in any script', async () => {
    expect(
      await processor.processItem({ id: 'a', text: 'The quick brown fox jumps over the lazy dog' }, { jobId: 'j', attempt: 1 }),
    ).toEqual({
      ok: true,
      output: { words: 9, characters: 43 },
    });
    expect(await processor.processItem({ id: 'b', text: "Ein Wort, zwei Wörter — l'été" }, { jobId: 'j', attempt: 1 })).toEqual({
      ok: true,
      output: { words: 5, characters: 29 },
    });
  });

  it('refuses an item without a text, for good (not retryable), naming the field', async () => {
    expect(await processor.processItem({ id: 'c', body: 'x' }, { jobId: 'j', attempt: 1 })).toMatchObject({
      ok: false,
      code: 'invalid',
      retryable: false,
      reason: expect.stringMatching(/text/) as string,
    });
  });

  it('reduces the outputs to totals and a CSV, one line per text', async () => {
    const files = new Map<string, string>();
    const summary = await processor.finalize({
      jobId: 'j',
      round: 0,
      outputs: async function* () {
        for (const output of [
          { id: 'a', output: { words: 9, characters: 43 } },
          { id: 'b', output: { words: 4, characters: 21 } },
        ])
          yield await Promise.resolve(output);
      },
      writeFile: (name, _type, body) => {
        files.set(name, body);
        return Promise.resolve(name);
      },
    });
    expect(summary).toEqual({ files: { counts: 'wordcount.csv' }, texts: 2, words: 13, characters: 64 });
    expect(files.get('wordcount.csv')).toBe('id,words,characters\r\na,9,43\r\nb,4,21\r\n');
  });
});
