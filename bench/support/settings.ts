/** The app's settings a benchmark starts it with: local.settings.sample.json's `Values`. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function sampleSettings(): Record<string, string> {
  const file = join(__dirname, '..', '..', '..', 'local.settings.sample.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { Values: Record<string, string> }).Values;
}
