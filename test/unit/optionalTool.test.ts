import type * as OptionalToolModule from '../support/optionalTool';
import { optionalTool } from '../support/optionalTool';

const tool = (path: string | undefined, name = 'frobber') => ({
  name,
  neededBy: `the ${name === 'frobber' ? 'frob' : name} tests`,
  enable: `apt-get install ${name}`,
  locate: () => path,
});

describe('optionalTool', () => {
  it('returns the path of a tool that is there, CI or not', () => {
    expect(optionalTool(tool('/usr/bin/frobber'), { CI: 'true' })).toBe('/usr/bin/frobber');
    expect(optionalTool(tool('/usr/bin/frobber'), {})).toBe('/usr/bin/frobber');
  });

  it('fails a CI run that lacks the tool, saying how to install it', () => {
    expect(() => optionalTool(tool(undefined), { CI: 'true' })).toThrow(
      'frobber is required when CI=true (for the frob tests): apt-get install frobber',
    );
  });

  it('elsewhere announces the skip once, on one line, and returns undefined', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(optionalTool(tool(undefined), {})).toBeUndefined();
      expect(optionalTool(tool(undefined), {})).toBeUndefined();
      expect(write.mock.calls).toEqual([['\nSKIPPED the frob tests: frobber was not found. To run them: apt-get install frobber.\n']]);
    } finally {
      write.mockRestore();
    }
  });

  it("is not announced again by a process that inherits the announcer's environment (jest's workers)", () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const announcer: NodeJS.ProcessEnv = {};
      expect(optionalTool(tool(undefined, 'gizmo'), announcer)).toBeUndefined();
      expect(write).toHaveBeenCalledTimes(1);
      // A worker: another process (its own announced set), the same environment.
      jest.isolateModules(() => {
        const fresh = jest.requireActual<typeof OptionalToolModule>('../support/optionalTool');
        expect(fresh.optionalTool(tool(undefined, 'gizmo'), { ...announcer })).toBeUndefined();
        expect(fresh.optionalTool(tool(undefined, 'doohickey'), { ...announcer })).toBeUndefined();
      });
      expect(write.mock.calls.map(([text]) => String(text).trim().split(':')[0])).toEqual([
        'SKIPPED the gizmo tests',
        'SKIPPED the doohickey tests',
      ]);
    } finally {
      write.mockRestore();
    }
  });
});
