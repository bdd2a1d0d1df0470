/**
 * The extensions every devhost started from the CLI (or `npm start`) loads, like the extension
 * bundle of the real host. The Durable Functions engine registers itself here.
 */
import { DurableExtension } from './durable/extension';
import type { HostProvider } from './provider';

export function defaultExtensions(): HostProvider[] {
  return [new DurableExtension()];
}
