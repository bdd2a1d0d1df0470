// The pure projects (unit, client: no process, no storage, no network) keep a tighter safety net
// than the run's five minutes (jest.config.js); a minute is still many times their slowest test.
jest.setTimeout(60_000);
