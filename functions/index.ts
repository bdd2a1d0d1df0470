/**
 * The app's entry point (package.json "main"). It loads every capability's registrations explicitly,
 * which is more reliable than a glob on Flex Consumption, and wires the lifecycle hooks.
 */
import { app } from '@azure/functions';

import { runShutdown } from '../shared/lifecycle';

import './health';
import './apidocs';
import './console';
import './counters';
import './gates';
import './idempotency';
import './jobs';
import './notFound';
import './openapi';
import './schedules';
import './sequences';
import './streams';

// Server-sent events (gate releases) need streamed responses.
app.setup({ enableHttpStream: true });

app.hook.appTerminate(async () => {
  await runShutdown();
});
