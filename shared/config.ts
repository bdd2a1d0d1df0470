/**
 * Reads settings: the groups each capability declares in its own `settings.ts` (shared/settings.ts)
 * and the connections, each read by its owner (shared/storage/connection.ts,
 * shared/messaging/connection.ts) through a SettingsSource; the composition root (shared/app/)
 * hands both in. Nothing here imports a capability.
 *
 * Every missing or malformed setting is reported by name at once, in one ConfigurationInvalid.
 */
import { AppError } from './errors';
import { namesOf, type Setting, type SettingsGroup, type SettingsOf } from './settings';

type Env = Readonly<Record<string, string | undefined>>;

/** Groups of declared settings by the key their values are composed under (`config.<key>`). */
type Groups = Readonly<Record<string, SettingsGroup<object>>>;

export type SettingsOfGroups<G extends Groups> = { readonly [K in keyof G]: SettingsOf<G[K]> };

/** What a connection's reader reads settings through: values by name, and a problem to report by name. */
export interface SettingsSource {
  /** The setting's value, trimmed; undefined when unset or blank. */
  raw(name: string): string | undefined;
  /** The setting, or `fallback`; a value not matching `pattern` is reported. */
  string(name: string, fallback: string, pattern: RegExp): string;
  /** The setting as a URL without trailing slashes; one that is not a URL (or not https when required) is reported. */
  url(name: string, requireHttps: boolean): string | undefined;
  /** Reports a problem (`<setting>: <what is wrong>`); loading fails naming every one. */
  problem(text: string): void;
}

/** Collects problems so one failure message can name every bad setting. */
class SettingsReader implements SettingsSource {
  readonly problems: string[] = [];

  constructor(readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string, pattern: RegExp): string {
    const value = this.raw(name) ?? fallback;
    if (!pattern.test(value)) this.problems.push(`${name}: "${value}" does not match ${String(pattern)}`);
    return value;
  }

  problem(text: string): void {
    this.problems.push(text);
  }

  url(name: string, requireHttps: boolean): string | undefined {
    const text = this.raw(name);
    if (text === undefined) return undefined;
    try {
      const url = new URL(text);
      if (requireHttps && url.protocol !== 'https:') this.problems.push(`${name}: must be an https URL`);
      return text.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name}: "${text}" is not a URL`);
      return undefined;
    }
  }

  /** One group's values: each setting read on its own (its default when unset), then the group's own checks. */
  group<T extends object>(settings: SettingsGroup<T>): T {
    const values: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries<Setting<unknown>>(settings.settings)) {
      const text = this.raw(setting.env);
      if (text === undefined) {
        values[key] = setting.fallback;
        continue;
      }
      const result = setting.schema.safeParse(text);
      if (result.success) values[key] = result.data;
      else {
        for (const issue of result.error.issues) this.problems.push(`${setting.env}: ${issue.message}`);
        values[key] = setting.fallback;
      }
    }
    const read = values as T;
    settings.check?.(read, (env, message) => this.problems.push(`${env}: ${message}`), namesOf(settings));
    return read;
  }

  groups<G extends Groups>(groups: G): SettingsOfGroups<G> {
    return Object.fromEntries(Object.entries(groups).map(([key, settings]) => [key, this.group(settings)])) as SettingsOfGroups<G>;
  }

  /** Throws one ConfigurationInvalid naming every bad setting found. */
  failOnProblems(): void {
    if (this.problems.length === 0) return;
    throw new AppError('ConfigurationInvalid', `Invalid settings:\n  - ${this.problems.join('\n  - ')}`, {
      extra: { settings: this.problems.map((p) => p.slice(0, p.indexOf(':'))) },
    });
  }
}

/**
 * Settings groups alone, validated, without the connections: the timer and queue registrations
 * need theirs when the app loads, before (and without) a storage connection.
 */
export function readSettings<G extends Groups>(groups: G, env: Env = process.env): SettingsOfGroups<G> {
  const r = new SettingsReader(env);
  const values = r.groups(groups);
  r.failOnProblems();
  return values;
}

/** One group alone, validated. */
export function readGroup<T extends object>(settings: SettingsGroup<T>, env: Env = process.env): T {
  return readSettings({ group: settings }, env).group;
}

/**
 * Every group and the connections (read by `connections`, the owners' readers), validated together:
 * one error names every bad setting.
 */
export function loadConfig<G extends Groups, C extends object>(
  groups: G,
  connections: (source: SettingsSource) => C,
  env: Env = process.env,
): SettingsOfGroups<G> & C {
  const r = new SettingsReader(env);
  const read = connections(r);
  const values = r.groups(groups);
  r.failOnProblems();
  return { ...values, ...read };
}
