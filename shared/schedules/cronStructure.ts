/**
 * The shortest gap a cron's fields allow between two fires, whatever the date: found in the
 * seconds, minutes and hours fields, never by walking the calendar. Walking found `* * * 29 2 *`
 * (every second of 29 February) harmless, since the next leap day was further ahead than it looked;
 * its seconds field says 1 s.
 *
 * The finest field with more than one value decides: the smallest step between two of its values,
 * and the step across its end (`59` to `0`) when the next coarser unit can fire twice in a row. Days
 * are assumed able to follow each other (a day field may allow it), so this errs towards a shorter
 * gap, never a longer one. Undefined when the fields are beyond this reading (the caller then walks
 * the calendar) or when all three fields have one value (fires a day or more apart).
 */

interface Level {
  readonly values: readonly number[];
  readonly size: number;
  readonly seconds: number;
}

/** The values of one of the seconds, minutes or hours fields (`*`, `?`, `a`, `a-b`, each with an optional `/n`, comma-separated). */
function fieldValues(field: string, size: number): number[] | undefined {
  const values = new Set<number>();
  for (const part of field.split(',')) {
    const match = /^(\*|\?|(\d{1,2})(?:-(\d{1,2}))?)(?:\/(\d{1,2}))?$/.exec(part);
    if (match === null) return undefined;
    const all = match[1] === '*' || match[1] === '?';
    const from = all ? 0 : Number(match[2]);
    const to = all ? size - 1 : match[3] !== undefined ? Number(match[3]) : match[4] !== undefined ? size - 1 : from;
    const step = match[4] === undefined ? 1 : Number(match[4]);
    if (from >= size || to >= size || from > to || step < 1) return undefined;
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return [...values].sort((a, b) => a - b);
}

/** Whether level `i` can fire in two consecutive units of itself (days, above hours, are assumed to). */
function adjacent(levels: readonly Level[], i: number): boolean {
  const level = levels[i];
  if (level === undefined) return true;
  const { values, size } = level;
  if (values.some((v, k) => values[k + 1] === v + 1)) return true;
  return values[0] === 0 && values[values.length - 1] === size - 1 && adjacent(levels, i + 1);
}

export function structuralGapSeconds(cron: string): number | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 6) return undefined;
  const spec: readonly [string | undefined, number, number][] = [
    [fields[0], 60, 1],
    [fields[1], 60, 60],
    [fields[2], 24, 3600],
  ];
  const levels: Level[] = [];
  for (const [field, size, seconds] of spec) {
    const values = field === undefined ? undefined : fieldValues(field, size);
    if (values === undefined || values.length === 0) return undefined;
    levels.push({ values, size, seconds });
  }
  for (let i = 0; i < levels.length; i++) {
    const { values, size, seconds } = levels[i] as Level;
    if (values.length < 2) continue;
    let gap = Math.min(...values.slice(1).map((v, k) => v - (values[k] as number)));
    if (adjacent(levels, i + 1)) gap = Math.min(gap, size - (values[values.length - 1] as number) + (values[0] as number));
    return gap * seconds;
  }
  return undefined;
}
