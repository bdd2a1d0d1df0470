/**
 * How a setting is declared: once, by the module that owns it (`shared/<capability>/settings.ts`),
 * with its environment name, its type (a zod schema that reads the setting's text), its default,
 * its bounds and a one-line description. shared/config.ts reads declared groups from the
 * environment; docs/configuration.md, local.settings.sample.json and infra/app-settings.json are
 * generated from the same declarations (`npm run settings:sync`), so none of them can drift.
 */
import { Cron } from 'croner';
import * as z from 'zod';

export interface Setting<T> {
  /** The app setting (environment variable) it is read from. */
  readonly env: string;
  /** One line for docs/configuration.md. */
  readonly doc: string;
  /** The value when the setting is unset or blank. */
  readonly fallback: T;
  /** The default as text, as local.settings.sample.json spells it ('' when there is none). */
  readonly text: string;
  /** Overrides the default column of the docs table, e.g. `(required)` for a setting host.json reads. */
  readonly docDefault?: string;
  /** Reads the (trimmed, non-empty) text; an issue's message becomes the problem reported for the setting. */
  readonly schema: z.ZodType<T, string>;
}

/** Reports a problem with a setting of the group, by its environment name. */
type Report = (env: string, message: string) => void;

type Names<T> = { readonly [K in keyof T]: string };

/** Relates settings of a group to each other, after each was read on its own. */
type Check<T> = (values: T, report: Report, names: Names<T>) => void;

export interface SettingsGroup<T> {
  readonly settings: { readonly [K in keyof T]: Setting<T[K]> };
  // A method, so a group of any values is a SettingsGroup<object> to the reader.
  check?(values: T, report: Report, names: Names<T>): void;
}

export type SettingsOf<G> = G extends SettingsGroup<infer T> ? T : never;

type ValuesOf<D> = { readonly [K in keyof D]: D[K] extends Setting<infer V> ? V : never };

export function group<D extends Readonly<Record<string, Setting<unknown>>>>(
  settings: D,
  check?: Check<ValuesOf<D>>,
): SettingsGroup<ValuesOf<D>> {
  return { settings: settings as SettingsGroup<ValuesOf<D>>['settings'], ...(check === undefined ? {} : { check }) };
}

/** The environment names of a group's settings, by key: for messages that name the setting to change. */
export function namesOf<T>(settings: SettingsGroup<T>): Names<T> {
  return Object.fromEntries(Object.entries<Setting<unknown>>(settings.settings).map(([key, s]) => [key, s.env])) as Names<T>;
}

/** What a parse answers instead of a value: the problems, each reported with the setting's name. */
export class SettingProblems {
  constructor(readonly messages: readonly string[]) {}
}

function problem(message: string): SettingProblems {
  return new SettingProblems([message]);
}

function parsing<T>(parse: (text: string) => T | SettingProblems): z.ZodType<T, string> {
  return z.string().transform((text, ctx) => {
    const value = parse(text);
    if (!(value instanceof SettingProblems)) return value;
    for (const message of value.messages) ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });
}

export function int(env: string, fallback: number, min: number, max: number, doc: string): Setting<number> {
  const schema = parsing((text) => {
    const value = Number(text);
    return Number.isSafeInteger(value) && value >= min && value <= max
      ? value
      : problem(`"${text}" is not an integer from ${min} to ${max}`);
  });
  return { env, doc, fallback, text: String(fallback), schema };
}

export function bool(env: string, fallback: boolean, doc: string): Setting<boolean> {
  const schema = parsing((text) => {
    const lower = text.toLowerCase();
    if (lower === 'true' || lower === '1') return true;
    if (lower === 'false' || lower === '0') return false;
    return problem(`"${text}" is not true or false`);
  });
  return { env, doc, fallback, text: String(fallback), schema };
}

export function text(env: string, fallback: string, doc: string, pattern?: RegExp): Setting<string> {
  const schema =
    pattern === undefined
      ? z.string()
      : z.string().regex(pattern, { error: (issue) => `"${String(issue.input)}" does not match ${String(pattern)}` });
  return { env, doc, fallback, text: fallback, schema };
}

/** A comma- (or semicolon-) separated list; blank entries are dropped. */
export function list(env: string, fallback: readonly string[], doc: string): Setting<readonly string[]> {
  const schema = z.string().transform((value) =>
    value
      .split(/[,;]/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
  return { env, doc, fallback, text: fallback.join(','), schema };
}

/** A six-field NCRONTAB expression (`second minute hour day month day-of-week`), checked by croner. */
export function ncrontab(env: string, fallback: string, doc: string): Setting<string> {
  const schema = parsing((value) => {
    if (value.split(/\s+/).length !== 6) {
      return problem(`"${value}" is not a six-field NCRONTAB expression (second minute hour day month day-of-week)`);
    }
    try {
      new Cron(value, { paused: true });
    } catch (err) {
      return problem(`"${value}" is not a valid schedule (${err instanceof Error ? err.message : String(err)})`);
    }
    return value;
  });
  return { env, doc, fallback, text: fallback, schema };
}

/** A setting whose text the owner parses (`parse` answers the value, or problems that never echo a secret). */
export function custom<T>(
  env: string,
  fallback: T,
  fallbackText: string,
  doc: string,
  parse: (text: string) => T | SettingProblems,
  options: { readonly docDefault?: string } = {},
): Setting<T> {
  return { env, doc, fallback, text: fallbackText, schema: parsing(parse), ...options };
}
