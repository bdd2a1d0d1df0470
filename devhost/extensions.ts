/**
 * The extensions every devhost started from the CLI (or `npm start`) loads, like the extension
 * bundle of the real host. The Durable Functions engine registers itself here.
 */
import { DurableExtension } from './durable/extension';
import type { HostExtension } from './extension';

export function defaultExtensions(): HostExtension[] {
  return [new DurableExtension()];
}
