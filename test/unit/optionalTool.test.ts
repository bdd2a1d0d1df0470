import { optionalTool } from '../support/optionalTool';

const tool = (path: string | undefined) => ({
  name: 'frobber',
  neededBy: 'the frob tests',
  enable: 'apt-get install frobber',
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
});
