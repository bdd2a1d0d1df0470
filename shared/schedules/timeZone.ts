/**
 * IANA time zones, checked against the ICU data Node ships (the same data croner computes local
 * times with), so a zone that validates here is one the schedule can actually be computed in.
 */

/** The canonical spelling of an IANA zone (`utc` → `UTC`), or undefined when it is not one. */
export function canonicalTimeZone(name: string): string | undefined {
  // Offsets ("+05:00") and abbreviations other than ICU's links are not zones: they have no DST rules.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
