/** Allow-list entries as the settings spell them: an exact name, `prefix*`, or `*` alone for any name. */
export function matchesPattern(pattern: string, name: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}
