/** The Durable Functions task hub (shared/settings.ts explains the declarations). */
import { group, text } from '../settings';

export const durableSettings = group({
  // host.json reads it too (`%TALLYHO_TASK_HUB%`), and the host has no default for it: the app's
  // fallback only names the hub in its own bookkeeping (the streams type count) when it is unset.
  taskHub: {
    ...text(
      'TALLYHO_TASK_HUB',
      'tallyho',
      'Durable Functions task hub name, read by `host.json` (no default there; `local.settings.sample.json` and Azure set `tallyho`)',
    ),
    docDefault: '(required)',
  },
});
