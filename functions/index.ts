/**
 * The app's entry point (package.json "main"). It loads every registration explicitly, which is
 * more reliable than a glob on Flex Consumption, and stops the app when the host stops.
 */
import { app } from '@azure/functions';

import { appStopping, stopApp } from './_app';

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

// A host drains in-flight requests before its appTerminate hooks run, so an open long poll or event
// stream would hold the stop for its whole timeout: the stop signal itself (Ctrl+C reaches the whole
// process group; a host stopping its worker sends SIGTERM) lets them answer first. Once: a second
// signal has its default effect.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, appStopping);
