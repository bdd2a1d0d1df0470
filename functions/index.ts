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
// process group of `npm start`) lets them answer first. A listener would also take away the signal's
// default (exit), so in a process with no handler of its own — a worker signalled directly, a
// benchmark — the signal is raised again once the app has been told, and the process stops as before.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    appStopping();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
