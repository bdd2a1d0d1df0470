/**
 * The app of this process: the one module-level singleton. It is built on first use, from the
 * environment (shared/app/production.ts), so a bad setting does not stop the host from indexing the
 * functions: every request then answers with a problem naming the setting, and /api/health says so.
 * The registration settings (timer schedules, queue names, the jobs body limit) are read when the
 * app loads, since the host needs them to index the functions.
 */
import type { App } from '../shared/app/createApp';
import { productionApp } from '../shared/app/production';
import { registrationSettings } from '../shared/app/settings';
import { recentDurableClient } from './_durable';

let built: App | undefined;

export function theApp(): App {
  built ??= productionApp(process.env, recentDurableClient);
  return built;
}

/** Stops the app if it was built (the host's appTerminate hook). */
export async function stopApp(): Promise<void> {
  await built?.shutdown();
}

/** The app, if built, lets go of the requests that only wait (long polls, event streams): the host is stopping. */
export function appStopping(): void {
  built?.stopping();
}

export const registration = registrationSettings();
