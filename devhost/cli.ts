/**
 * `node dist/devhost/cli.js [--app DIR] [--port N] [--host ADDR] [--quiet]` — runs a v4 Node app
 * (default: the current folder) on the offline host. PORT sets the port too (default 7071; 0 picks a
 * free one). Once listening it prints `devhost listening on <url>` (also with --quiet, so scripts can
 * find the port). Ctrl+C or SIGTERM drains in-flight invocations, runs appTerminate hooks, stops
 * extensions and exits 0; a second signal exits at once with 1.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { defaultExtensions } from './extensions';
import { startHost } from './host';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      app: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    console.log('Usage: node dist/devhost/cli.js [--app DIR] [--port N] [--host ADDR] [--quiet]');
    return;
  }
  const appRoot = resolve(values.app ?? process.cwd());
  const portText = values.port ?? process.env.PORT;
  const port = portText === undefined || portText === '' ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    throw new Error(`Port must be 0-65535 (got ${portText})`);
  // The Node worker runs with the app folder as its working directory.
  process.chdir(appRoot);
  const host = await startHost({
    appRoot,
    ...(port === undefined ? {} : { port }),
    ...(values.host === undefined ? {} : { host: values.host }),
    quiet: values.quiet === true,
    extensions: defaultExtensions(),
  });
  console.log(`devhost listening on ${host.baseUrl}`);
  // The admin API always needs the master key; one made up for this run is shown so it can be used.
  if (host.masterKeyGenerated) console.log(`devhost master key: ${host.masterKey} (set FUNCTIONS_ADMIN_KEY to choose it)`);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      console.error(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    if (values.quiet !== true) console.log(`${signal} received: draining in-flight invocations and stopping`);
    host.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(`devhost failed to start: ${err instanceof Error ? err.message : String(err)}`);
  if (err instanceof Error && err.stack !== undefined && process.env.DEVHOST_DEBUG === 'true') console.error(err.stack);
  process.exit(1);
});
