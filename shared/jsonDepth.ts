/**
 * Nesting depth of JSON text, measured before it is parsed. zod's `z.json()` validates recursively,
 * so a small body nested a few thousand levels deep overflows the stack (a 500 for a 4 KB request);
 * refusing it from the text costs one linear scan and no allocation.
 */

/** Deepest nesting of arrays and objects any request body or queue message may have. */
export const maxJsonDepth = 64;

/** True when `text` nests arrays/objects deeper than `limit` (brackets inside strings do not count). */
export function jsonDeeperThan(text: string, limit: number = maxJsonDepth): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      depth++;
      if (depth > limit) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}
