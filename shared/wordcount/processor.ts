/**
 * Word count: the small in-app processor docs/write-a-processor.md walks through. An item is a text;
 * its result is the number of words and characters in it; the job's summary is the totals, and the
 * finalizer writes them per item as `wordcount.csv`. Everything it needs is in this file.
 */
import * as z from 'zod';

import type { JobProcessor } from '../jobs';

export const wordcountInfo = {
  name: 'wordcount',
  description: 'texts in (`{"id", "text"}`), words and characters per text and in total out (wordcount.csv)',
  example: {
    processor: 'wordcount',
    items: [
      { id: 'doc-1', text: 'The quick brown fox jumps over the lazy dog' },
      { id: 'doc-2', text: 'Ein Wort, zwei Wörter' },
    ],
  },
} as const;

const document = z.strictObject({ id: z.string(), text: z.string().max(100_000) });

const counts = z.object({ words: z.number().int(), characters: z.number().int() });

/** Words are runs of letters, digits, apostrophes and hyphens, in any script. */
function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}'’-]+/gu)?.length ?? 0;
}

export function wordcountProcessor(): JobProcessor {
  return {
    name: wordcountInfo.name,
    processItem(item) {
      const parsed = document.safeParse(item);
      if (!parsed.success) {
        // Not retryable: the same item fails the same way however often it runs.
        const reason = parsed.error.issues.map((i) => `${i.path.join('.') || 'item'}: ${i.message}`).join('; ');
        return Promise.resolve({ ok: false, code: 'invalid', reason, retryable: false });
      }
      const { text } = parsed.data;
      return Promise.resolve({ ok: true, output: { words: countWords(text), characters: [...text].length } });
    },
    async finalize(context) {
      let words = 0;
      let characters = 0;
      const lines = ['id,words,characters'];
      for await (const { id, output } of context.outputs()) {
        const c = counts.parse(output);
        words += c.words;
        characters += c.characters;
        lines.push(`${id},${c.words},${c.characters}`);
      }
      const file = await context.writeFile('wordcount.csv', 'text/csv; charset=utf-8', `${lines.join('\r\n')}\r\n`);
      return { files: { counts: file }, texts: lines.length - 1, words, characters };
    },
  };
}
