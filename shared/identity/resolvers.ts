/**
 * One resolver per set of settings, kept for the life of the process: the Entra key set it fetched
 * and cached is shared by every request of the instance (each instance keeps its own copy; a key
 * Entra rolls is fetched by each on first sight, docs/security.md "Callers").
 */
import { readSettings } from '../config';
import { type CallerResolver, createCallerResolver, platformFacts } from './resolve';
import { type IdentitySettings, identitySettings } from './settings';

type Env = Readonly<Record<string, string | undefined>>;

const resolvers = new WeakMap<IdentitySettings, CallerResolver>();

export function callerResolverFor(
  settings: IdentitySettings,
  env: Env = process.env,
  isRevoked?: (credentialId: string) => Promise<boolean>,
): CallerResolver {
  let resolver = resolvers.get(settings);
  if (resolver === undefined) {
    resolver = createCallerResolver(settings, platformFacts(env), isRevoked === undefined ? {} : { isRevoked });
    resolvers.set(settings, resolver);
  }
  return resolver;
}

let defaults: CallerResolver | undefined;

/**
 * The resolver of the default settings (`keys` mode, no credential key) on no platform: what a route
 * uses when it is run without the app's resolver (tests, the route list's documentation).
 */
export function defaultCallerResolver(): CallerResolver {
  defaults ??= createCallerResolver(readSettings({ identity: identitySettings }, {}).identity, { appServiceAuthEnabled: false });
  return defaults;
}
