/**
 * The app's entry point (package.json "main"). It loads every registration explicitly, which is
 * more reliable than a glob on Flex Consumption, and stops the app when the host stops.
 */
import { app } from '@azure/functions';

import { stopApp } from './_app';

// First: the trace context every handler runs in.
import './_telemetry';
import './http';
import './counters';
import './gates';
import './idempotency';
import './jobs';
import './schedules';
import './streams';

// Server-sent events (gate releases) need streamed responses.
app.setup({ enableHttpStream: true });

app.hook.appTerminate(async () => {
  await stopApp();
});
