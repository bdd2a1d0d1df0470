/**
 * WEBSITE_HOSTNAME: the host name the real host builds extension webhook URLs from (the Functions
 * host's HostNameProvider). Azure sets it, and `func start` sets it to `localhost:<port>`; without
 * it the Durable extension has no base URL and every client binding fails with "Webhooks are not
 * configured" (devhost/docs/real-host.md#host-name).
 *
 * The devhost keeps it in the app's environment too: durable-functions' `getClient` rewrites every
 * link to http://localhost:7071 when the variable is missing. Hosts started in one process (tests)
 * share that environment, so a value put there by one devhost is not taken as another's setting.
 */
import { getSetting } from './settings';

/** Values devhosts in this process put in the environment (kept after they stop: one per start). */
const setByDevhosts = new Set<string>();

export interface WebsiteHostname {
  /** The host name this host serves under, or undefined (the bare runtime, no `func start`). */
  readonly value: string | undefined;
  /** Puts the environment back as it was. */
  restore(): void;
}

/**
 * The host name for a host listening on `port`: the WEBSITE_HOSTNAME setting, else (when
 * `likeFuncStart`) `localhost:<port>` as `func start` sets it, else none.
 */
export function websiteHostname(
  settings: Readonly<Record<string, string | undefined>>,
  env: NodeJS.ProcessEnv,
  port: number,
  likeFuncStart: boolean,
): WebsiteHostname {
  const configured = getSetting(settings, 'WEBSITE_HOSTNAME')?.trim();
  if (configured !== undefined && configured !== '' && !setByDevhosts.has(configured))
    return { value: configured, restore: () => undefined };
  if (!likeFuncStart) return { value: undefined, restore: () => undefined };
  const value = `localhost:${port}`;
  const previous = env.WEBSITE_HOSTNAME;
  env.WEBSITE_HOSTNAME = value;
  setByDevhosts.add(value);
  return {
    value,
    restore: () => {
      if (env.WEBSITE_HOSTNAME !== value) return;
      if (previous === undefined) Reflect.deleteProperty(env, 'WEBSITE_HOSTNAME');
      else env.WEBSITE_HOSTNAME = previous;
    },
  };
}

/**
 * The origin of extension webhook URLs for a host name, as the Functions host builds it
 * (`DefaultScriptWebHookProvider.GetExtensionWebHookRoute`): http only for `localhost:…`, https
 * for every other name.
 */
export function webhookOrigin(hostName: string): string {
  return `${/^localhost:/i.test(hostName) ? 'http' : 'https'}://${hostName}`;
}
