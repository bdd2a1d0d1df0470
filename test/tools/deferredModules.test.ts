/**
 * The bundle's stand-in for a module a dependency requires early and uses late
 * (scripts/build-app.mjs `deferredStandIn`): nothing is required until the stand-in is first called,
 * constructed or read, and then it behaves as the module itself, once loaded.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const buildApp = join(__dirname, '..', '..', 'scripts', 'build-app.mjs');

/** Evaluates the stand-in over a fake `require` whose module is a function with a property, and reports what happened. */
function exercise(): Record<string, unknown> {
  const script = `
    const { deferredStandIn } = await import(${JSON.stringify(buildApp)});
    let loads = 0;
    function real(a, b) { return { self: this === undefined ? 'none' : 'other', sum: a + b }; }
    real.version = '1';
    class Made { constructor(v) { this.v = v; } }
    real.Made = Made;
    const fakeRequire = (name) => { loads++; if (name !== 'pkg') throw new Error(name); return real; };
    const module = { exports: undefined };
    new Function('require', 'module', deferredStandIn('pkg'))(fakeRequire, module);
    const m = module.exports;
    const out = { loadsBeforeUse: loads };
    out.read = m.version;
    out.called = m(2, 3);
    out.has = 'Made' in m;
    m.version = '2';
    out.written = real.version;
    out.constructed = new m.Made(7).v;
    out.constructedItself = new m(1, 1);
    out.loads = loads;
    console.log(JSON.stringify(out));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

test('a deferred module is required on first use, once, and then reads, calls, writes and constructs as itself', () => {
  expect(exercise()).toEqual({
    loadsBeforeUse: 0,
    read: '1',
    called: { self: 'none', sum: 5 },
    has: true,
    written: '2',
    constructed: 7,
    constructedItself: { self: 'other', sum: 2 },
    loads: 1,
  });
});
