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

export function inCi(env?: NodeJS.ProcessEnv): boolean;
export function onPath(command: string, env?: NodeJS.ProcessEnv): string | undefined;
export function optionalTool(tool: OptionalTool, env?: NodeJS.ProcessEnv): string | undefined;
