/** The optional-tool rule (./optionalTool.cjs) for test files, plus a `describe` that skips without the tool. */
import { inCi, onPath, type OptionalTool, optionalTool } from './optionalTool.cjs';

export { inCi, onPath, type OptionalTool, optionalTool };

/** `describe` when the tool is there, else `describe.skip` with the reason in the name. */
export function describeWithTool(tool: OptionalTool, name: string, body: (path: string) => void): void {
  const path = optionalTool(tool);
  if (path === undefined) describe.skip(`${name} [skipped: ${tool.name} not found]`, () => body(''));
  else describe(name, () => body(path));
}
