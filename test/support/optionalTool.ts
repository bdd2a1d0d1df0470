/**
 * Optional tools (Chromium, shellcheck, zip, curl, …): a fresh machine with Node.js alone must pass
 * `npm test`, yet CI must never pass because a tool it was meant to install is missing. So a tool is
 * required when `CI=true` (`.ci/run` installs it: a missing one is an error there), and elsewhere the
 * tests that need it are skipped with one line on stderr naming the tool and how to enable them.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface OptionalTool {
  /** What the tool is called in the announcement, e.g. "Chromium". */
  readonly name: string;
  /** Which tests need it, e.g. "the admin console browser tests". */
  readonly neededBy: string;
  /** How to make it available, e.g. "apt-get install chromium, or set CHROMIUM_PATH". */
  readonly enable: string;
  /** The tool's path when it is on this machine. */
  readonly locate: () => string | undefined;
}

const announced = new Set<string>();

const inCi = (env: NodeJS.ProcessEnv = process.env): boolean => env.CI === 'true';

/** The executable `command` on PATH, if any. */
export function onPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter).filter((d) => d !== '')) {
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here; next directory
    }
  }
  return undefined;
}

/**
 * The tool's path, or undefined after announcing the skip. Throws when CI=true and the tool is
 * missing, so the test file fails instead of passing without having run.
 */
export function optionalTool(tool: OptionalTool, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const found = tool.locate();
  if (found !== undefined) return found;
  if (inCi(env)) throw new Error(`${tool.name} is required when CI=true (for ${tool.neededBy}): ${tool.enable}`);
  // One plain line, not console.warn: jest decorates that with a stack trace the reader must wade through.
  if (announced.has(tool.name)) return undefined;
  announced.add(tool.name);
  process.stderr.write(`\nSKIPPED ${tool.neededBy}: ${tool.name} was not found. To run them: ${tool.enable}.\n`);
  return undefined;
}

/** `describe` when the tool is there, else `describe.skip` with the reason in the name. */
export function describeWithTool(tool: OptionalTool, name: string, body: (path: string) => void): void {
  const path = optionalTool(tool);
  if (path === undefined) describe.skip(`${name} [skipped: ${tool.name} not found]`, () => body(''));
  else describe(name, () => body(path));
}
