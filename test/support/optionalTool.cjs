/**
 * Optional tools (Chromium, shellcheck, zip, curl, the real Functions host, …): a fresh machine with
 * Node.js alone must pass `npm test`, yet CI must never pass because a tool it was meant to install
 * is missing. So a tool is required when `CI=true` (`.ci/run` installs it: a missing one is an error
 * there), and elsewhere the tests that need it are skipped with one line on stderr naming the tool
 * and how to enable them. CommonJS, so jest.config.js applies the same rule when it decides whether a
 * whole project (the real-host e2e run) takes part.
 */
const { accessSync, constants } = require('node:fs');
const { delimiter, join } = require('node:path');

const announced = new Set();

// The tools announced by this process or the one that started it: jest's workers inherit the main
// process's environment, so a tool the run's config announced is not announced again by a test file.
const announcedVariable = 'TALLYHO_SKIPS_ANNOUNCED';
const announcedBefore = (env, name) => (env[announcedVariable] ?? '').split('\n').includes(name);

const inCi = (env = process.env) => env.CI === 'true';

/** The executable `command` on PATH, if any. */
function onPath(command, env = process.env) {
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
 * missing, so the run fails instead of passing without having run those tests.
 */
function optionalTool(tool, env = process.env) {
  const found = tool.locate();
  if (found !== undefined) return found;
  if (inCi(env)) throw new Error(`${tool.name} is required when CI=true (for ${tool.neededBy}): ${tool.enable}`);
  // One plain line, not console.warn: jest decorates that with a stack trace the reader must wade through.
  if (announced.has(tool.name) || announcedBefore(env, tool.name)) return undefined;
  announced.add(tool.name);
  env[announcedVariable] = [env[announcedVariable], tool.name].filter((n) => n !== undefined && n !== '').join('\n');
  process.stderr.write(`\nSKIPPED ${tool.neededBy}: ${tool.name} was not found. To run them: ${tool.enable}.\n`);
  return undefined;
}

module.exports = { inCi, onPath, optionalTool };
